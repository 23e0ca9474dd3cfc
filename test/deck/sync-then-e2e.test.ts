import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { KONG_YML, deck, startDeckStack, summaryOf } from '../helpers/deck.ts';
import { REPO_ROOT, runToEnd } from '../helpers/process.ts';

// A local gateway whose declarative file is empty, configured only by `deck gateway sync
// gateway/kong.yml`, passes the portable end-to-end suite: the Admin API writes decK makes
// take effect on the proxy as the built-in loader's do.

/** Entities a decK file declares, nested ones included (services' routes, routes' plugins…). */
function declaredEntities(node: unknown): number {
  let count = 0;
  for (const key of ['consumers', 'services', 'routes', 'plugins', 'keyauth_credentials', 'acls']) {
    const list = (node as Record<string, unknown>)[key];
    if (Array.isArray(list)) for (const entity of list) count += 1 + declaredEntities(entity);
  }
  return count;
}

async function runPortableSuite(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await runToEnd(process.execPath, [`${REPO_ROOT}node_modules/ava/entrypoints/cli.mjs`, 'test/e2e/portable'], { ...process.env, ...env });
  return { code, output: stdout + stderr };
}

test('a gateway configured only by deck gateway sync passes the portable e2e suite', async (t) => {
  t.timeout(120_000);
  const stack = await startDeckStack('empty');
  try {
    t.is((await stack.admin('/routes')).body.data.length, 0, 'the gateway starts with no routes');
    const synced = await deck(['gateway', 'sync', ...stack.addr, KONG_YML], stack.env);
    const declared = declaredEntities(parse(readFileSync(KONG_YML, 'utf8')));
    t.deepEqual(summaryOf(synced), { created: declared, updated: 0, deleted: 0 }, synced);
    // With DECK_ANIMAL_STORE_HOSTS=[] (any host) decK sends no hosts (go-kong omits an empty
    // list), the gateway stores none, and the next diff finds each of our routes changed: hosts
    // [] in the file, none on the gateway (docs/shared-kong.md, "Hosts"). With hosts named it is
    // 0/0/0 (test/deck/shared-kong.test.ts).
    const again = await deck(['gateway', 'diff', ...stack.addr, KONG_YML], stack.env);
    const routes = (await stack.admin('/routes')).body.data.length as number;
    t.deepEqual(summaryOf(again), { created: 0, updated: routes, deleted: 0 }, again);

    const suite = await runPortableSuite({ GATEWAY_URL: stack.gateway.proxyUrl, KONG_ADMIN_URL: stack.gateway.adminUrl });
    t.is(suite.code, 0, suite.output);
    t.regex(suite.output, /\d+ tests passed/);
    t.deepEqual(stack.gateway.logs.filter((line) => line.startsWith('err')), [], 'no Admin API or proxy errors');
  } finally {
    await stack.dispose();
  }
});
