import { benchLuaPhases } from './lua-bench.ts';

/** The Lua plugin's in-process cost in a process of its own, away from the bench's heap and workers. */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const { microsPerRequest } = await benchLuaPhases({ seconds });
console.log(`lua plugin µs ${microsPerRequest}`);
