import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';
import { benchChainPieces } from './chain-pieces.ts';

/** The plugin chain's pieces in a process of their own, away from the bench's heap and workers. */
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const vm = (process.env.LUA_VM ?? 'luajit') as LuaVmKind;
const result = await benchChainPieces({ seconds, vm });
console.log(`chain pieces ${JSON.stringify(result)}`);
