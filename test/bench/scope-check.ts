import { fileURLToPath } from 'node:url';
import { leastCpuPerCall, secondsArgument } from './lua-in-nginx.ts';

/**
 * What checking a key's scopes adds to animal-store-access per request (issue 31; target ≤ 1 µs):
 * CPU µs per call of the plugin's own work (gateway/plugins/animal-store-access/scopes.lua: the
 * credential's parsed scope set, cached by credential; the scope the route and method need, from
 * the path as kong.request.get_path normalizes it), run inside nginx as on a node. The least of
 * five rounds after a warm-up, as edge-hash.ts measures. The chain's own figure, a scoped key
 * against a plain one through the whole gateway, is the bench's breakdown (breakdown.ts).
 *
 *   npx tsx test/bench/scope-check.ts [--seconds 2] [--json]
 */

export interface ScopeCheckFigures {
  /** A key with scopes, allowed: set from the cache, path normalized, needed scope found. */
  scoped: number;
  /** A key with scopes, refused: the same, up to the refusal. */
  refused: number;
  /** A key without scopes: the cached "everything" answer, nothing more. */
  unscoped: number;
}

// Each call takes the next of a few paths, so that LuaJIT cannot fold the work on a constant away.
const SCENARIOS: Record<keyof ScopeCheckFigures, string> = {
  scoped: 'n = n % 4 + 1; check(SCOPED, "GET", READS[n])',
  refused: 'n = n % 4 + 1; check(SCOPED, "POST", WRITES[n])',
  unscoped: 'n = n % 4 + 1; check(PLAIN, "GET", READS[n])',
};

const SETUP = `
local scopes = require "kong.plugins.animal-store-access.scopes"
local normalize = require("kong.tools.uri").normalize
local scopes_of, required, ALL = scopes.of, scopes.required, scopes.ALL
local SCOPED = { id = "c1", tags = { "petstore-consumer", "name:ci", "scope:pets:read", "scope:orders:read", "key-hash:sha256" } }
local PLAIN = { id = "c2", tags = { "petstore-consumer", "name:default", "key-hash:sha256" } }
local READS = { "/v1/pets", "/v1/pets/17", "/v1/store/orders", "/v1/store/orders/3" }
local WRITES = { "/v1/store/orders", "/v1/store/orders/3/approve", "/v1/store/orders/4/cancel", "/v1/store/orders/5/deliver" }
local n = 0
-- what animal-store-access's access does after the ACL group check; true: allowed
local function check(credential, method, path)
  local allowed = scopes_of(credential)
  if allowed == ALL then
    return true
  end
  local needed = required(method, normalize(path, true))
  return not needed or allowed[needed] == true
end
assert(check(SCOPED, "GET", "/v1/pets") and not check(SCOPED, "POST", "/v1/store/orders") and check(PLAIN, "POST", "/v1/pets"))
`;

export async function measureScopeCheck(seconds = 2): Promise<ScopeCheckFigures> {
  return leastCpuPerCall('animal-store-access', SETUP, SCENARIOS, seconds);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await measureScopeCheck(secondsArgument());
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
  } else {
    console.log('animal-store-access, scope check per request (CPU µs, least of 5 rounds, in nginx):');
    console.log(`  a scoped key, allowed     ${figures.scoped.toFixed(3)} µs  (target ≤ 1)`);
    console.log(`  a scoped key, refused     ${figures.refused.toFixed(3)} µs`);
    console.log(`  a key without scopes      ${figures.unscoped.toFixed(3)} µs`);
  }
}
