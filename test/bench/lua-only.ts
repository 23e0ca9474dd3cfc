import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';
import { benchLuaPhases } from './lua-bench.ts';

/** The Lua plugin's in-process cost in a process of its own, away from the bench's heap and workers. */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const vm = (process.env.LUA_VM ?? 'luajit') as LuaVmKind;
const { microsPerRequest, bookkeepingMicros, noopMicros } = await benchLuaPhases({ seconds, vm });
console.log(`lua plugin µs ${microsPerRequest} bookkeeping ${bookkeepingMicros} noop ${noopMicros}`);
