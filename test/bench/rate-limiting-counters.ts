import { fileURLToPath } from 'node:url';
import { leastCpuPerCall, secondsArgument } from './lua-in-nginx.ts';

/**
 * What rate-limiting's local policy spends on the shared dict per request (issue 33): CPU µs per
 * call, inside nginx with the node's kong_rate_limiting_counters dict, for a plan of two periods
 * (minute and day, as the bench's consumer has). Kong's way reads each period's count (get) and
 * then counts the request (incr); counting first makes one incr per period and, for a refused
 * request, one more to take it back. The least of five rounds after a warm-up, as edge-hash.ts.
 *
 *   npx tsx test/bench/rate-limiting-counters.ts [--seconds 2] [--json]
 */

export interface RateLimitingCounterFigures {
  /** get, then incr, per period (usage, then increment). */
  readThenCount: number;
  /** incr per period (count, then complete): the request let through. */
  countFirst: number;
  /** incr per period, then incr -1 per period (count, then uncount): the request refused. */
  countFirstRefused: number;
}

// Each call counts under the next of a few identifiers, so that the keys exist (the steady state)
// and LuaJIT cannot fold the work on a constant away.
const SCENARIOS: Record<keyof RateLimitingCounterFigures, string> = {
  readThenCount: 'local keys = next_keys(); LOCAL.usage(CONF, DERIVED, keys, STARTS, COUNTS); LOCAL.increment(CONF, DERIVED, keys, STARTS, 1)',
  countFirst: 'local keys = next_keys(); LOCAL.count(CONF, DERIVED, keys, STARTS, COUNTS); LOCAL.complete(CONF, DERIVED, keys)',
  countFirstRefused: 'local keys = next_keys(); LOCAL.count(CONF, DERIVED, keys, STARTS, COUNTS); LOCAL.uncount(CONF, DERIVED, keys)',
};

const SETUP = `
local LOCAL = require("kong.plugins.rate-limiting.policies")["local"]
local shm = ngx.shared.kong_rate_limiting_counters
local CONF = {}
local DERIVED = { n = 2, periods = { { name = "minute" }, { name = "day" } } }
local STARTS, COUNTS = { 0, 0 }, { 0, 0 }
local KEYS = {}
for i = 1, 8 do
  local base = "ratelimit:00000000-0000-0000-0000-000000000000:00000000-0000-0000-0000-000000000000:127.0.0." .. i .. ":"
  KEYS[i] = { base .. "1764201600000:minute", base .. "1764201600000:day" }
end
local n = 0
local function next_keys()
  n = n % 8 + 1
  return KEYS[n]
end
-- both ways count alike: one request each, counts before it
assert(LOCAL.count(CONF, DERIVED, KEYS[1], STARTS, COUNTS) and COUNTS[1] == 0 and COUNTS[2] == 0)
assert(LOCAL.complete(CONF, DERIVED, KEYS[1]) and shm:get(KEYS[1][1]) == 1 and shm:get(KEYS[1][2]) == 1)
assert(LOCAL.count(CONF, DERIVED, KEYS[1], STARTS, COUNTS) and COUNTS[1] == 1)
LOCAL.uncount(CONF, DERIVED, KEYS[1])
assert(shm:get(KEYS[1][1]) == 1 and shm:get(KEYS[1][2]) == 1)
assert(LOCAL.usage(CONF, DERIVED, KEYS[1], STARTS, COUNTS) and COUNTS[2] == 1)
`;

export async function measureRateLimitingCounters(seconds = 2): Promise<RateLimitingCounterFigures> {
  return leastCpuPerCall('', SETUP, SCENARIOS, seconds, ['lua_shared_dict kong_rate_limiting_counters 12m;']);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await measureRateLimitingCounters(secondsArgument());
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
  } else {
    console.log('rate-limiting, local policy, two periods: shared-dict work per request (CPU µs, least of 5 rounds, in nginx):');
    console.log(`  read then count (get + incr per period)    ${figures.readThenCount.toFixed(3)} µs`);
    console.log(`  count first, let through (incr per period) ${figures.countFirst.toFixed(3)} µs`);
    console.log(`  count first, refused (incr, incr -1)       ${figures.countFirstRefused.toFixed(3)} µs`);
  }
}
