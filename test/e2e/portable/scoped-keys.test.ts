import test from 'ava';
import { digestApiKey } from '../../../packages/provisioning/index.ts';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { startTarget, type Target } from '../../helpers/target.ts';

// A key's scopes are its key-auth credential's `scope:` tags; kong.yml's animal-store-access
// refuses what they do not cover, after rate-limiting (gateway/plugins/animal-store-access/
// scopes.lua), and the edge plugin answers 403 insufficient_scope (RFC 6750 3.1). Portable: the
// local stack, or real Kong (GATEWAY_URL + KONG_ADMIN_URL) with the same kong.yml and plugins.
// module state, not ava's context: test/deck/sync-then-e2e.test.ts runs the portable files in one worker
const shared = {} as { target: Target };

const SCOPES = ['pets:read', 'pets:write', 'orders:read', 'orders:write'] as const;

/** Every operation of gateway/openapi.yaml, with the scope it needs (null: none). */
const OPERATIONS = [
  { method: 'GET', path: '/v1/pets', template: '/pets', needs: 'pets:read' },
  { method: 'HEAD', path: '/v1/pets', template: '/pets', needs: 'pets:read' },
  { method: 'POST', path: '/v1/pets', template: '/pets', needs: 'pets:write', json: { name: 'Rex', categoryId: 1 } },
  { method: 'GET', path: '/v1/pets/1', template: '/pets/{petId}', needs: 'pets:read' },
  { method: 'GET', path: '/v1/store/orders', template: '/store/orders', needs: 'orders:read' },
  { method: 'POST', path: '/v1/store/orders', template: '/store/orders', needs: 'orders:write', json: { petId: 1 } },
  { method: 'GET', path: '/v1/store/orders/1', template: '/store/orders/{orderId}', needs: 'orders:read' },
  { method: 'POST', path: '/v1/store/orders/1/approve', template: '/store/orders/{orderId}/approve', needs: 'orders:write' },
  { method: 'POST', path: '/v1/store/orders/1/deliver', template: '/store/orders/{orderId}/deliver', needs: 'orders:write' },
  { method: 'POST', path: '/v1/store/orders/1/cancel', template: '/store/orders/{orderId}/cancel', needs: 'orders:write' },
  { method: 'GET', path: '/v1/openapi.json', template: '/openapi.json', needs: null },
  { method: 'GET', path: '/v1/openapi.yaml', template: '/openapi.yaml', needs: null },
] as const;

/** A consumer of ours with one key whose credential carries `scopes` as tags, as the CLI writes them. */
async function scopedKey(target: Target, username: string, scopes: readonly string[]): Promise<string> {
  const key = await target.provision(username, { minute: 10_000 });
  await setScopes(target, key, scopes);
  return key;
}

async function setScopes(target: Target, key: string, scopes: readonly string[]): Promise<void> {
  const path = `/key-auths/${digestApiKey(key)}`;
  const { tags } = (await target.admin(path)).body as { tags: string[] };
  const json = { tags: [...tags.filter((tag) => !tag.startsWith('scope:')), ...scopes.map((scope) => `scope:${scope}`)] };
  await target.writing(async () => {
    const patched = await target.admin(path, { method: 'PATCH', json });
    if (patched.status !== 200) throw new Error(JSON.stringify(patched.body));
  });
}

test.before(async () => {
  shared.target = await startTarget();
});
test.after.always(async () => {
  await shared.target?.dispose();
});

function call(target: Target, key: string, operation: (typeof OPERATIONS)[number]) {
  return target.call(operation.path, { method: operation.method, key, ...('json' in operation ? { json: operation.json } : {}) });
}

for (const scope of SCOPES) {
  test(`scope matrix: a key with only ${scope}, against every operation`, async (t) => {
    const { target } = shared;
    const key = await scopedKey(target, `scoped-${scope.replace(':', '-')}`, [scope]);
    for (const operation of OPERATIONS) {
      const what = `${operation.method} ${operation.path}`;
      const response = await call(target, key, operation);
      t.truthy(response.headers.get('x-ratelimit-limit'), `${what}: counted, with the rate headers`);
      if (operation.needs === null || operation.needs === scope) {
        t.not(response.status, 403, what);
        continue;
      }
      t.is(response.status, 403, what);
      t.is(response.headers.get('www-authenticate'), `Bearer realm="animal-store", error="insufficient_scope", scope="${operation.needs}"`, what);
      if (operation.method !== 'HEAD') {
        t.deepEqual(response.body, { code: 'insufficient_scope', message: `This API key lacks the scope ${operation.needs}.`, status: 403 }, what);
        t.deepEqual(contractProblems(operation.method, operation.template, response, { checkHeaders: true }), [], what);
      }
    }
  });
}

test('a key without scopes, and one with every scope, may do everything', async (t) => {
  const { target } = shared;
  for (const key of [await scopedKey(target, 'scoped-none', []), await scopedKey(target, 'scoped-all', SCOPES)]) {
    for (const operation of OPERATIONS) t.not((await call(target, key, operation)).status, 403, `${operation.method} ${operation.path}`);
  }
});

test('the path is matched as the router and the backend see it: case, escapes, dot segments, slashes', async (t) => {
  const { target } = shared;
  const key = await scopedKey(target, 'scoped-paths', ['orders:read']);
  for (const path of ['/v1/PETS', '/v1/%70ets', '/v1/x/../pets', '/v1//pets', '/v1/Pets/1']) {
    const response = await target.call(path, { key });
    t.is(response.status, 403, path);
    t.is(response.body.code, 'insufficient_scope', path);
  }
  t.not((await target.call('/v1/Store/Orders', { key })).status, 403);
});

test('a refusal counts like any other answer', async (t) => {
  const { target } = shared;
  const key = await scopedKey(target, 'scoped-counted', ['pets:read']);
  const first = await target.call('/v1/store/orders', { key });
  const second = await target.call('/v1/store/orders', { key });
  t.is(first.status, 403);
  t.is(Number(second.headers.get('x-ratelimit-remaining')), Number(first.headers.get('x-ratelimit-remaining')) - 1);
});

test('changing a credential’s scope tags applies from the next request (no stale cached scopes)', async (t) => {
  const { target } = shared;
  const key = await scopedKey(target, 'scoped-changed', ['pets:read']);
  t.is((await target.call('/v1/store/orders', { key })).status, 403);
  await setScopes(target, key, ['orders:read']);
  t.not((await target.call('/v1/store/orders', { key })).status, 403);
  t.is((await target.call('/v1/pets', { key })).status, 403);
});
