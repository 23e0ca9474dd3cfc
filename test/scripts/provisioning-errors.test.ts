import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { Provisioning, ProvisioningError, loadCatalogue, type ProvisioningErrorCode } from '../../packages/provisioning/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// The library's failures as a web server would meet them (packages/provisioning/README.md): a
// ProvisioningError whose code says what kind, the CLI's message, nothing printed.

async function kongShaped(t: ExecutionContext) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  return { admin, provisioning: Provisioning.connect({ url: admin.url }, loadCatalogue()) };
}

/** An Admin API that answers every call with `answer`. */
async function answering(t: ExecutionContext, answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return Provisioning.connect({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, loadCatalogue());
}

async function rejects(t: ExecutionContext, promise: Promise<unknown>, code: ProvisioningErrorCode, message: string) {
  const error = await t.throwsAsync(promise, { instanceOf: ProvisioningError, message });
  t.is(error?.code, code);
  return error;
}

test('a consumer that does not exist, is not ours, or is taken: its code, and no write', async (t) => {
  const { admin, provisioning } = await kongShaped(t);
  admin.addConsumer('from-kong-yml', ['animal-store']);
  admin.addConsumer('taken', ['petstore-consumer', 'plan:free']);
  await rejects(t, provisioning.show('ghost'), 'consumer-not-found', 'consumer ghost does not exist');
  await rejects(
    t,
    provisioning.rotateKey('from-kong-yml'),
    'consumer-not-managed',
    'consumer from-kong-yml belongs to gateway/kong.yml (tag animal-store); change it there, not with this CLI',
  );
  await rejects(t, provisioning.create({ username: 'taken', plan: 'pro' }), 'consumer-exists', 'consumer taken already exists');
  t.deepEqual(admin.requests.filter((r) => r.method !== 'GET'), []);
});

// Kong's 409 names the unique field; every 409 used to read as consumer-exists, naming the wrong one.
test('a custom_id another consumer has is custom-id-taken, and nothing is left behind', async (t) => {
  const { admin, provisioning } = await kongShaped(t);
  await provisioning.create({ username: 'first', plan: 'free', customId: 'dup-id' });
  const before = admin.requests.length;
  await rejects(
    t,
    provisioning.create({ username: 'second', plan: 'free', customId: 'dup-id' }),
    'custom-id-taken',
    'custom_id dup-id is already used by another consumer',
  );
  const writes = admin.requests.slice(before).filter((r) => r.method !== 'GET');
  t.deepEqual(writes.map((r) => `${r.method} ${r.url}`), ['POST /consumers'], 'the refused create, nothing to roll back');
  await rejects(t, provisioning.show('second'), 'consumer-not-found', 'consumer second does not exist');
});

test('limits that do not fit the plan are plan-limits, before any call', async (t) => {
  const { admin, provisioning } = await kongShaped(t);
  await rejects(t, provisioning.create({ username: 'big', plan: 'enterprise' }), 'plan-limits', 'plan enterprise has custom limits: give it a minute and a day limit');
  await rejects(
    t,
    provisioning.create({ username: 'big', plan: 'enterprise', limits: { minute: 1.5, day: 10 } }),
    'plan-limits',
    'enterprise limits: needs integer minute >= 1 and day >= minute',
  );
  t.deepEqual(admin.requests, []);
});

test('a username or custom_id with a control or format character is consumer-options, before any call', async (t) => {
  const { admin, provisioning } = await kongShaped(t);
  const message = (field: string, shown: string) => `${field} ${shown}: control and format characters (Unicode Cc, Cf) and line breaks are not allowed`;
  await rejects(t, provisioning.create({ username: 'x\ny', plan: 'free' }), 'consumer-options', message('username', '"x\\ny"'));
  await rejects(t, provisioning.create({ username: 'x\u2028y', plan: 'free' }), 'consumer-options', message('username', '"x\\u{2028}y"'));
  await rejects(t, provisioning.create({ username: 'x\u200by', plan: 'free' }), 'consumer-options', message('username', '"x\\u{200b}y"'));
  await rejects(t, provisioning.create({ username: 'ok', plan: 'free', customId: 'c\u0085' }), 'consumer-options', message('custom_id', '"c\\u{85}"'));
  t.deepEqual(admin.requests, []);
  // letters of any script, emoji and combining marks are fine
  await provisioning.create({ username: 'zoë-café-😀', plan: 'free', customId: 'kunde-ü' });
});

test('an Admin API that is down is admin-api-unreachable', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const provisioning = Provisioning.connect({ url: `http://127.0.0.1:${port}` }, loadCatalogue());
  await rejects(t, provisioning.show('anyone'), 'admin-api-unreachable', `cannot reach the Kong Admin API at http://127.0.0.1:${port}: ECONNREFUSED`);
});

test('a read whose connection closes unanswered is sent once more; a write is not', async (t) => {
  // as a kept-alive connection the Admin API closes just as it is reused
  const seen: string[] = [];
  const provisioning = await answering(t, (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (seen.length === 1 || req.method !== 'GET') return void req.socket.destroy();
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not found' }));
  });
  await rejects(t, provisioning.show('anyone'), 'consumer-not-found', 'consumer anyone does not exist');
  t.deepEqual(seen, ['GET /consumers/anyone', 'GET /consumers/anyone']);

  seen.length = 0;
  const error = await t.throwsAsync(provisioning.create({ username: 'new-one', plan: 'free' }), { instanceOf: ProvisioningError });
  // the consumer may have been made: its removal is tried (and is dropped too)
  t.is(error?.code, 'rollback-failed');
  t.regex(error?.message ?? '', /^cannot reach the Kong Admin API at .*: the connection closed without an answer; rolling back also failed: /);
  t.is(seen.filter((line) => line.startsWith('POST ')).length, 1, 'the write was sent once');
  t.is(seen.filter((line) => line.startsWith('DELETE ')).length, 1);
});

test('a read dropped unanswered twice says so in one line', async (t) => {
  const provisioning = await answering(t, (req) => void req.socket.destroy());
  const error = await t.throwsAsync(provisioning.show('anyone'), { instanceOf: ProvisioningError });
  t.is(error?.code, 'admin-api-unreachable');
  t.regex(error?.message ?? '', /^cannot reach the Kong Admin API at http:\/\/127\.0\.0\.1:\d+: the connection closed without an answer, twice$/);
});

test("a 404 that is not the Admin API's is admin-api-unexpected, never consumer-not-found", async (t) => {
  // Kong 3.9's proxy without a matching route (kong/runloop/handler.lua, kong.response.error)
  const proxy = await answering(t, (_, res) => {
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    res.end('{\n  "message":"no Route matched with those values",\n  "request_id":"4b0ed9e1a35c2d2c3b7c0d1d"\n}');
  });
  const error = await t.throwsAsync(proxy.show('anyone'), { instanceOf: ProvisioningError });
  t.is(error?.code, 'admin-api-unexpected');
  t.regex(error?.message ?? '', /^http:\/\/127\.0\.0\.1:\d+ is not Kong's Admin API: it answered GET \/consumers\/anyone with a 404 /);
  const html = await answering(t, (_, res) => void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404 Not Found</h1>'));
  await t.throwsAsync(html.list().next(), { instanceOf: ProvisioningError, message: /is not Kong's Admin API: it answered GET \/consumers with a 404/ });
});

test("Kong's error is admin-api-failed with its status and message", async (t) => {
  const provisioning = await answering(t, (_, res) => {
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'An unexpected error occurred' }));
  });
  const error = await rejects(t, provisioning.show('anyone'), 'admin-api-failed', 'reading consumer anyone: Kong answered 500: An unexpected error occurred');
  t.is(error?.status, 500);
});

test('an answer without the id the library relies on is admin-api-unexpected, not a crash later', async (t) => {
  const provisioning = await answering(t, (_, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ username: 'no-id', tags: ['petstore-consumer'] }));
  });
  await rejects(t, provisioning.show('no-id'), 'admin-api-unexpected', 'reading consumer no-id: Kong answered a consumer without id');
  const listing = await answering(t, (_, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'not-a-page' }));
  });
  await rejects(t, listing.list().next(), 'admin-api-unexpected', 'listing consumers: Kong answered something other than a page');
});

test('an Admin API that never answers fails the call after the timeout, naming it: 30 s unless told', async (t) => {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provisioning = Provisioning.connect({ url, timeoutMs: 300 }, loadCatalogue());
  const started = Date.now();
  await rejects(t, provisioning.show('anyone'), 'admin-api-unreachable', `the Kong Admin API at ${url} did not answer GET /consumers/anyone within 0.3 s`);
  t.true(Date.now() - started < 5000);

  // headers, then a body that never ends: the same
  const stalled = createServer((_, res) => void res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":'));
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    stalled.closeAllConnections();
    return new Promise<void>((resolve) => stalled.close(() => resolve()));
  });
  const stalledUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  await rejects(
    t,
    Provisioning.connect({ url: stalledUrl, timeoutMs: 300 }, loadCatalogue()).show('anyone'),
    'admin-api-unreachable',
    `the Kong Admin API at ${stalledUrl} did not answer GET /consumers/anyone within 0.3 s`,
  );

  const cli = await runCliInProcess(['show', 'anyone'], { KONG_ADMIN_URL: url, KONG_ADMIN_TIMEOUT: '1' });
  t.is(cli.code, 1);
  t.is(cli.stderr, `error: the Kong Admin API at ${url} did not answer GET /consumers/anyone within 1 s\n`);
  const bad = await runCliInProcess(['show', 'anyone', '--admin-timeout', '0'], { KONG_ADMIN_URL: url });
  t.is(bad.code, 2);
  t.is(bad.stderr, 'error: --admin-timeout must be a whole number of seconds from 1 to 3600, got "0" (see show --help)\n');
});
