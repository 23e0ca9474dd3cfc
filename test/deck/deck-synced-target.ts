import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { KONG_YML, deck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';

// sync-then-e2e.test.ts's first import: this serial hook is registered first, so the portable
// files' hooks (concurrent ones wait for the serial ones before them) start once it is done:
// a local gateway whose declarative file is empty, configured only by `deck gateway sync
// gateway/kong.yml`, becomes the portable suite's target (GATEWAY_URL, KONG_ADMIN_URL).

/** Entities a decK file declares, nested ones included (services' routes, routes' plugins…). */
function declaredEntities(node: unknown): number {
  let count = 0;
  for (const key of ['consumers', 'services', 'routes', 'plugins', 'keyauth_credentials', 'acls']) {
    const list = (node as Record<string, unknown>)[key];
    if (Array.isArray(list)) for (const entity of list) count += 1 + declaredEntities(entity);
  }
  return count;
}

/** The synced gateway, for the test file's last hooks (its logs, its disposal). */
export const synced: { stack?: DeckStack } = {};

test.serial.before('a gateway with an empty declarative file, configured by deck gateway sync gateway/kong.yml', async (t) => {
  const stack = await startDeckStack('empty');
  synced.stack = stack;
  t.is((await stack.admin('/routes')).body.data.length, 0, 'the gateway starts with no routes');
  const result = await deck(['gateway', 'sync', ...stack.addr, KONG_YML], stack.env);
  const declared = declaredEntities(parse(readFileSync(KONG_YML, 'utf8')));
  t.deepEqual(summaryOf(result), { created: declared, updated: 0, deleted: 0 }, result);
  // With DECK_ANIMAL_STORE_HOSTS=[] (any host) decK sends no hosts (go-kong omits an empty
  // list), the gateway stores none, and the next diff finds each of our routes changed: hosts
  // [] in the file, none on the gateway (docs/shared-kong.md, "Hosts"). With hosts named it is
  // 0/0/0 (test/deck/shared-kong.test.ts).
  const again = await deck(['gateway', 'diff', ...stack.addr, KONG_YML], stack.env);
  const routes = (await stack.admin('/routes')).body.data.length as number;
  t.deepEqual(summaryOf(again), { created: 0, updated: routes, deleted: 0 }, again);
  process.env.GATEWAY_URL = stack.gateway.proxyUrl;
  process.env.KONG_ADMIN_URL = stack.gateway.adminUrl;
});
