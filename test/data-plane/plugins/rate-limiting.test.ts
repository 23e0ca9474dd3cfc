import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startRedis, type RedisServer } from '../../helpers/redis.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, PLUGIN_FIXTURES_DIR, logged, mockUpstream, plugin, setClock } from './kit.ts';
import { freePort } from '../../../packages/node-runtime/free-port.js';

// Kong 3.9.3's spec/03-plugins/23-rate-limiting/04-access_spec.lua (ACCESS:<line>) and
// 02-policies_spec.lua (POLICIES:<line>), transcribed, on data-plane nodes with the test clock
// and real redis-servers of the test's own.
//
// Differences, each on purpose:
// - Kong's spec retries a case when the minute turns during it; the test clock holds the time at
//   12:00:30, so the headers are asserted exactly (RateLimit-Reset 30) where Kong checks ranges.
// - The `cluster` policy needs Kong's database: the control plane refuses it (hybrid mode, as
//   Kong's schema does when role = control_plane), so its cases are not here; neither is #grpc.
// - ACCESS:427 with limit_by = header sends the header as a request option, so Kong limits by IP
//   there; here the header is sent.
// - Redis TLS with ssl_verify = true needs lua_ssl_trusted_certificate, which the node's nginx.conf
//   does not set: here only the refusal of an untrusted certificate is asserted.
// - The sync_rate case (ACCESS:1283) waits 61 s for Redis to expire the minute; here the clock
//   moves to the next minute, and POLICIES:215 checks what the sync writes to Redis.

const ACCESS = 'spec/03-plugins/23-rate-limiting/04-access_spec.lua';
const POLICIES = 'spec/03-plugins/23-rate-limiting/02-policies_spec.lua';

const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';
const T0 = Date.UTC(2030, 0, 1, 12, 0, 30);
const MINUTE_START = Date.UTC(2030, 0, 1, 12, 0, 0);
const RESET = 30;
const REDIS_DATABASE = 1;
const LIMIT_BY = ['ip', 'consumer', 'credential', 'service', 'header', 'path'] as const;
type LimitBy = (typeof LIMIT_BY)[number];

let upstream: Upstream;
let redis: RedisServer;
let faultRedis: RedisServer;
let authRedis: RedisServer;
let certDir: string;
let node: TestNode;
let policiesNode: TestNode;
const globalNodes: Record<string, TestNode> = {};
let globalConsumerNode: TestNode;
let closedPort: number;

// --- the configurations under test --------------------------------------------------------------

type Variant = 'local' | 'redis' | 'redis-ssl_no_verify';
const VARIANTS: Variant[] = ['local', 'redis', 'redis-ssl_no_verify'];

function policyOf(variant: Variant): Record<string, unknown> {
  if (variant === 'local') return { policy: 'local' };
  const base = { host: '127.0.0.1', password: '', database: REDIS_DATABASE };
  if (variant === 'redis') return { policy: 'redis', redis: { ...base, port: redis.port } };
  return {
    policy: 'redis',
    redis: { ...base, port: redis.tlsPort, ssl: true, ssl_verify: false, server_name: 'really.really.really.does.not.exist.host.test' },
  };
}

/** Accumulates services, routes, consumers, credentials and plugins, Kong's spec's setup_* calls. */
class Setup {
  readonly input: Required<SnapshotInput> = {
    certificates: [],
    snis: [],
    services: [],
    routes: [],
    consumers: [],
    keyauth_credentials: [],
    acls: [],
    plugins: [],
  };

  service(name: string, paths: string[]): void {
    const id = randomUUID();
    serviceIds.set(name, id);
    this.input.services.push({ id, name, url: `${upstream.url}/always_200` });
    this.input.routes.push({ name, service: name, paths, strip_path: true });
  }

  credential(username: string, key: string): void {
    this.input.consumers.push({ username });
    this.input.keyauth_credentials.push({ consumer: username, key });
  }

  plugin(name: string, scope: { service?: string }, config: Record<string, unknown>): void {
    this.input.plugins.push(plugin(name, scope, config));
  }
}

/** Service ids by name, for the counter keys (ratelimit:<route id>:<service id>:...). */
const serviceIds = new Map<string, string>();
const main = new Setup();

function caseName(variant: Variant, what: string): string {
  return `${variant}-${what}`;
}

// --- requests ----------------------------------------------------------------------------------

function get(target: TestNode, path: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return httpGet(target.url(path), { headers: { accept: 'application/json', ...headers } });
}

interface Series {
  status: number[];
  minuteLimit: (number | undefined)[];
  minuteRemaining: (number | undefined)[];
  hourLimit: (number | undefined)[];
  hourRemaining: (number | undefined)[];
  limit: (number | undefined)[];
  remaining: (number | undefined)[];
  reset: (number | undefined)[];
  retryAfter: (number | undefined)[];
}

const num = (value: string | string[] | undefined) => (value === undefined ? undefined : Number(value));

/** ACCESS:58 client_requests: n requests one after the other, their rate-limit headers. */
async function clientRequests(n: number, send: () => Promise<HttpResponse>): Promise<Series> {
  const series: Series = {
    status: [], minuteLimit: [], minuteRemaining: [], hourLimit: [], hourRemaining: [], limit: [], remaining: [], reset: [], retryAfter: [],
  };
  for (let i = 0; i < n; i++) {
    const res = await send();
    series.status.push(res.status);
    series.minuteLimit.push(num(res.headers['x-ratelimit-limit-minute']));
    series.minuteRemaining.push(num(res.headers['x-ratelimit-remaining-minute']));
    series.hourLimit.push(num(res.headers['x-ratelimit-limit-hour']));
    series.hourRemaining.push(num(res.headers['x-ratelimit-remaining-hour']));
    series.limit.push(num(res.headers['ratelimit-limit']));
    series.remaining.push(num(res.headers['ratelimit-remaining']));
    series.reset.push(num(res.headers['ratelimit-reset']));
    series.retryAfter.push(num(res.headers['retry-after']));
  }
  return series;
}

/** ACCESS:97 validate_headers, with the exact reset the held clock gives. */
function validateHeaders(t: ExecutionContext, series: Series, checkHour = false): void {
  t.deepEqual(series.minuteLimit, [6, 6, 6, 6, 6, 6, 6]);
  t.deepEqual(series.minuteRemaining, [5, 4, 3, 2, 1, 0, 0]);
  if (checkHour) {
    t.deepEqual(series.hourLimit, [99999, 99999, 99999, 99999, 99999, 99999, 99999]);
    t.deepEqual(series.hourRemaining, [99998, 99997, 99996, 99995, 99994, 99993, 99993]);
  }
  t.deepEqual(series.limit, [6, 6, 6, 6, 6, 6, 6]);
  t.deepEqual(series.remaining, [5, 4, 3, 2, 1, 0, 0]);
  t.deepEqual(series.status, [200, 200, 200, 200, 200, 200, 429]);
  t.deepEqual(series.reset, [RESET, RESET, RESET, RESET, RESET, RESET, RESET]);
  t.deepEqual(series.retryAfter, [undefined, undefined, undefined, undefined, undefined, undefined, RESET]);
}

function noRateLimitHeaders(t: ExecutionContext, res: HttpResponse): void {
  for (const name of ['x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) {
    t.is(res.headers[name], undefined, name);
  }
}

// --- ACCESS:427 blocks if exceeding limit (single <limit_by>), and the multiple-* cases ----------

const SINGLE: Record<string, { limitBy: LimitBy; path: string; send: () => Promise<HttpResponse> }> = {};

function defineSingle(variant: Variant, limitBy: LimitBy): void {
  const name = caseName(variant, `single-${limitBy}`);
  const path = `/${name}`;
  const key = `test_credential-${name}`;
  main.service(name, [path]);
  main.plugin('rate-limiting', { service: name }, {
    minute: 6,
    limit_by: limitBy,
    path,
    header_name: 'test-header',
    ...policyOf(variant),
  });
  if (limitBy === 'consumer' || limitBy === 'credential') {
    main.plugin('key-auth', { service: name }, { key_names: ['test-key'] });
    main.credential(`Bob-${name}`, key);
  }
  SINGLE[name] = {
    limitBy,
    path,
    send: () => {
      if (limitBy === 'header') return get(node, path, { 'test-header': 'test' });
      if (limitBy === 'consumer' || limitBy === 'credential') return get(node, path, { 'test-key': key });
      return get(node, path);
    },
  };
}

function defineCases(variant: Variant): void {
  for (const limitBy of LIMIT_BY) defineSingle(variant, limitBy);

  const policy = policyOf(variant);
  const one = (what: string, config: Record<string, unknown>) => {
    const name = caseName(variant, what);
    main.service(name, [`/${name}`]);
    main.plugin('rate-limiting', { service: name }, { ...config, ...policy });
  };
  one('multiple-ip', { minute: 6, limit_by: 'ip' });
  one('hide-client-headers', { minute: 6, limit_by: 'ip', hide_client_headers: true });
  one('multiple-limits', { minute: 6, hour: 99999, limit_by: 'ip' });
  one('expire-counter', { second: 1, limit_by: 'ip' });
  one('custom-error', { minute: 1, limit_by: 'ip', error_code: 404, error_message: 'Fake Not Found' });

  // ACCESS:874: two routes of one service, the plugin limits by the first route's path
  const pathCase = caseName(variant, 'multiple-path');
  main.service(pathCase, [`/1-${pathCase}`, `/2-${pathCase}`]);
  main.plugin('rate-limiting', { service: pathCase }, { minute: 6, limit_by: 'path', path: `/1-${pathCase}`, ...policy });

  one('multiple-header', { minute: 6, limit_by: 'header', header_name: 'test-header-1' });

  for (const limitBy of ['consumer', 'credential'] as const) {
    const name = caseName(variant, `multiple-${limitBy}`);
    main.service(name, [`/${name}`]);
    main.plugin('rate-limiting', { service: name }, { minute: 6, limit_by: limitBy, ...policy });
    main.plugin('key-auth', { service: name }, { key_names: ['test-key'] });
    main.credential(`Bob-${name}`, `test_credential_1-${name}`);
    main.credential(`Alice-${name}`, `test_credential_2-${name}`);
  }
}

// --- nodes and servers ---------------------------------------------------------------------------

function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'redis.crt');
  const key = join(dir, 'redis.key');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost',
  ], { stdio: 'ignore' });
  return { cert, key };
}

const nodeOptions = { plugins: BUNDLED_PLUGINS, testClock: true, trustedIps: ['0.0.0.0/0', '::/0'] };

test.before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'rl-certs-'));
  const { cert, key } = selfSignedCertificate(certDir);
  [upstream, redis, faultRedis, authRedis, closedPort] = await Promise.all([
    startUpstream(mockUpstream),
    startRedis({ tls: { cert, key, ca: cert } }),
    startRedis(),
    startRedis({ password: 'sekret' }),
    freePort(),
  ]);

  for (const variant of VARIANTS) defineCases(variant);

  // ACCESS:1180/1211 a Redis nobody listens on, fault_tolerant false / true
  for (const tolerant of [false, true]) {
    const name = `redis-unreachable-${tolerant ? 'tolerant' : 'strict'}`;
    main.service(name, [`/${name}`]);
    main.plugin('rate-limiting', { service: name }, {
      minute: 6, limit_by: 'ip', fault_tolerant: tolerant, policy: 'redis', redis: { host: '127.0.0.1', port: closedPort, ssl: false },
    });
  }
  // a Redis that dies and comes back (faultRedis), fault_tolerant false / true
  for (const tolerant of [false, true]) {
    const name = `redis-killed-${tolerant ? 'tolerant' : 'strict'}`;
    main.service(name, [`/${name}`]);
    main.plugin('rate-limiting', { service: name }, {
      minute: 6, limit_by: 'ip', fault_tolerant: tolerant, policy: 'redis', redis: { host: '127.0.0.1', port: faultRedis.port },
    });
  }
  // ssl_verify = true against a certificate no trusted CA signed
  main.service('redis-ssl-verify', ['/redis-ssl-verify']);
  main.plugin('rate-limiting', { service: 'redis-ssl-verify' }, {
    minute: 6, limit_by: 'ip', fault_tolerant: true, policy: 'redis',
    redis: { host: '127.0.0.1', port: redis.tlsPort, ssl: true, ssl_verify: true, server_name: 'localhost', database: REDIS_DATABASE },
  });
  // the same Redis, database and name without the check: its pooled connections must not serve the above
  main.service('redis-ssl-unverified', ['/redis-ssl-unverified']);
  main.plugin('rate-limiting', { service: 'redis-ssl-unverified' }, {
    minute: 6, limit_by: 'ip', fault_tolerant: true, policy: 'redis',
    redis: { host: '127.0.0.1', port: redis.tlsPort, ssl: true, ssl_verify: false, server_name: 'localhost', database: REDIS_DATABASE },
  });
  // Kong's key, value and expiry in Redis
  main.service('redis-key-layout', ['/redis-key-layout']);
  main.plugin('rate-limiting', { service: 'redis-key-layout' }, {
    minute: 6, limit_by: 'ip', policy: 'redis', redis: { host: '127.0.0.1', port: redis.port, password: '', database: REDIS_DATABASE },
  });
  // ACCESS:1283 sync_rate
  main.service('redis-sync-rate', ['/redis-sync-rate']);
  main.plugin('rate-limiting', { service: 'redis-sync-rate' }, {
    minute: 6, limit_by: 'ip', policy: 'redis', sync_rate: 10,
    redis: { host: '127.0.0.1', port: redis.port, password: '', database: REDIS_DATABASE, ssl: false },
  });
  // AUTH with a password, and with a username and a password (policies/init.lua get_redis_connection)
  for (const [name, username] of [['redis-auth-password', null], ['redis-auth-username', 'default']] as const) {
    main.service(name, [`/${name}`]);
    main.plugin('rate-limiting', { service: name }, {
      minute: 6, limit_by: 'ip', fault_tolerant: false, policy: 'redis',
      redis: { host: '127.0.0.1', port: authRedis.port, username, password: 'sekret', database: 3 },
    });
  }

  const globalService = (variant: Variant): SnapshotInput => ({
    services: [1, 2].map((i) => ({ name: `s${i}`, url: `${upstream.url}/always_200` })),
    routes: [1, 2].map((i) => ({ service: `s${i}`, paths: [`/${i}-test`] })),
    plugins: [plugin('rate-limiting', {}, { minute: 6, limit_by: 'service', ...policyOf(variant) })],
  });

  const started = await Promise.all([
    startTestNode({ ...nodeOptions, snapshot: main.input }),
    startTestNode({ ...nodeOptions, pluginsDir: PLUGIN_FIXTURES_DIR, plugins: [...BUNDLED_PLUGINS, 'rl-counter-probe'], snapshot: policiesSnapshot() }),
    ...VARIANTS.map((variant) => startTestNode({ ...nodeOptions, snapshot: globalService(variant) })),
    startTestNode({
      ...nodeOptions,
      snapshot: {
        services: [1, 2].map((i) => ({ name: `s${i}`, url: `${upstream.url}/always_200` })),
        routes: [1, 2].map((i) => ({ service: `s${i}`, paths: [`/${i}-test`] })),
        consumers: [{ username: 'Bob' }],
        keyauth_credentials: [{ consumer: 'Bob', key: 'test-credential' }],
        plugins: [
          plugin('key-auth', {}, { key_names: ['test-key'] }),
          plugin('rate-limiting', {}, {
            minute: 6, limit_by: 'credential', policy: 'local',
            redis: { host: '127.0.0.1', port: redis.port, password: '', database: REDIS_DATABASE, ssl: false },
          }),
        ],
      },
    }),
  ]);
  [node, policiesNode] = started;
  VARIANTS.forEach((variant, i) => (globalNodes[variant] = started[2 + i]!));
  globalConsumerNode = started.at(-1)!;
  await Promise.all([node, policiesNode, ...Object.values(globalNodes), globalConsumerNode].map((n) => setClock(n, T0)));
});

test.after.always(async () => {
  await Promise.all([node, policiesNode, ...Object.values(globalNodes), globalConsumerNode].map((n) => n?.dispose()));
  await Promise.all([upstream?.close(), redis?.stop(), faultRedis?.stop(), authRedis?.stop()]);
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

// --- ACCESS cases, for each policy ----------------------------------------------------------------

for (const variant of VARIANTS) {
  for (const limitBy of LIMIT_BY) {
    test(`[${variant}] blocks if exceeding limit (single ${limitBy}) (${ACCESS}:427)`, async (t) => {
      const single = SINGLE[caseName(variant, `single-${limitBy}`)]!;
      validateHeaders(t, await clientRequests(7, single.send));
    });
  }

  test(`[${variant}] blocks if exceeding limit (multiple ip) (${ACCESS}:505)`, async (t) => {
    for (const ip of ['127.0.0.1', '127.0.0.2']) {
      validateHeaders(t, await clientRequests(7, () => get(node, `/${caseName(variant, 'multiple-ip')}`, { 'X-Real-IP': ip })));
    }
  });

  test(`[${variant}] hide_client_headers (single ip) (${ACCESS}:620)`, async (t) => {
    const path = `/${caseName(variant, 'hide-client-headers')}`;
    const first = await get(node, path);
    t.is(first.status, 200);
    noRateLimitHeaders(t, first);
    let res = first;
    for (let i = 0; i < 10 && res.status !== 429; i++) res = await get(node, path);
    t.is(res.status, 429);
    noRateLimitHeaders(t, res);
  });

  test(`[${variant}] handles multiple limits (single ip) (${ACCESS}:677)`, async (t) => {
    validateHeaders(t, await clientRequests(7, () => get(node, `/${caseName(variant, 'multiple-limits')}`)), true);
  });

  test(`[${variant}] blocks with a custom error code and message (${ACCESS}:781)`, async (t) => {
    const path = `/${caseName(variant, 'custom-error')}`;
    t.is((await get(node, path)).status, 200);
    const res = await get(node, path);
    t.is(res.status, 404);
    t.is(res.json.message, 'Fake Not Found');
  });

  test(`[${variant}] blocks if exceeding limit (multiple path) (${ACCESS}:874)`, async (t) => {
    const name = caseName(variant, 'multiple-path');
    for (const path of [`/1-${name}`, `/2-${name}`]) validateHeaders(t, await clientRequests(7, () => get(node, path)));
  });

  test(`[${variant}] blocks if exceeding limit (multiple header) (${ACCESS}:920)`, async (t) => {
    const path = `/${caseName(variant, 'multiple-header')}`;
    for (const header of ['test-header-1', 'test-header-2']) {
      validateHeaders(t, await clientRequests(7, () => get(node, path, { [header]: 'test' })));
    }
  });

  for (const limitBy of ['consumer', 'credential'] as const) {
    test(`[${variant}] blocks if exceeding limit (multiple ${limitBy}) (${ACCESS}:965)`, async (t) => {
      const name = caseName(variant, `multiple-${limitBy}`);
      for (const key of [`test_credential_1-${name}`, `test_credential_2-${name}`]) {
        validateHeaders(t, await clientRequests(7, () => get(node, `/${name}`, { 'test-key': key })));
      }
    });
  }

  test(`[${variant}] blocks if exceeding limit (multiple service), a global plugin (${ACCESS}:828)`, async (t) => {
    for (const path of ['/1-test', '/2-test']) validateHeaders(t, await clientRequests(7, () => get(globalNodes[variant]!, path)));
  });

  // the clock moves: serial tests run before the others, and put it back
  test.serial(`[${variant}] expire counter (${ACCESS}:722)`, async (t) => {
    const path = `/${caseName(variant, 'expire-counter')}`;
    // A second's counter lives one second of nginx's (or Redis's) own clock, which the test clock
    // does not hold: a slow machine can lose it between the two requests. Kong's spec retries the
    // case (.eventually); here up to three times, each from a fresh client address.
    let headers = { 'X-Real-IP': '127.0.0.3' };
    try {
      let res1 = await get(node, path, headers);
      let res2 = await get(node, path, headers);
      for (let attempt = 4; res2.status !== 429 && attempt <= 5; attempt++) {
        headers = { 'X-Real-IP': `127.0.0.${attempt}` };
        res1 = await get(node, path, headers);
        res2 = await get(node, path, headers);
      }
      t.is(res1.status, 200);
      t.is(res1.headers['ratelimit-limit'], '1');
      t.is(res1.headers['ratelimit-remaining'], '0');
      t.is(res1.headers['ratelimit-reset'], '1');
      t.is(res1.headers['x-ratelimit-limit-second'], '1');
      t.is(res1.headers['x-ratelimit-remaining-second'], '0');
      t.is(res2.status, 429);
      t.is(res2.json.message, 'API rate limit exceeded');

      await setClock(node, T0 + 1000);
      t.is((await get(node, path, headers)).status, 200, 'counter cleared after the window');
    } finally {
      await setClock(node, T0);
    }
  });
}

test(`global for single consumer: one limit across services (${ACCESS}:1390)`, async (t) => {
  const send = (path: string) => () => get(globalConsumerNode, path, { 'test-key': 'test-credential' });
  validateHeaders(t, await clientRequests(7, send('/1-test')));
  const other = await clientRequests(7, send('/2-test'));
  t.deepEqual(other.minuteLimit, [6, 6, 6, 6, 6, 6, 6]);
  t.deepEqual(other.minuteRemaining, [0, 0, 0, 0, 0, 0, 0]);
  t.deepEqual(other.limit, [6, 6, 6, 6, 6, 6, 6]);
  t.deepEqual(other.remaining, [0, 0, 0, 0, 0, 0, 0]);
  t.deepEqual(other.status, [429, 429, 429, 429, 429, 429, 429]);
  t.deepEqual(other.reset, [RESET, RESET, RESET, RESET, RESET, RESET, RESET]);
});

// --- Redis: Kong's keys, faults, TLS, AUTH, sync_rate -------------------------------------------

test('redis: the counter is Kong\'s key, value and expiry in the configured database (policies/init.lua:68, :450)', async (t) => {
  const key = `ratelimit:${EMPTY_UUID}:${serviceIds.get('redis-key-layout')}:127.0.0.1:${MINUTE_START}:minute`;
  const series = await clientRequests(9, () => get(node, '/redis-key-layout'));
  t.deepEqual(series.status, [200, 200, 200, 200, 200, 200, 429, 429, 429]);
  const [, value, ttl] = await redis.commands(['SELECT', REDIS_DATABASE], ['GET', key], ['TTL', key]);
  // usage() counts with INCR before the check: the rejected requests are counted too (Kong's)
  t.is(value, '9');
  t.true(typeof ttl === 'number' && ttl > 0 && ttl <= 60, `TTL ${String(ttl)}`);
});

test(`redis: does not work if an error occurs, fault_tolerant false (${ACCESS}:1180)`, async (t) => {
  const res = await get(node, '/redis-unreachable-strict');
  t.is(res.status, 500);
  t.is(res.json.message, 'An unexpected error occurred');
  noRateLimitHeaders(t, res);
});

test(`redis: keeps working if an error occurs, fault_tolerant true (${ACCESS}:1211)`, async (t) => {
  const res = await get(node, '/redis-unreachable-tolerant');
  t.is(res.status, 200);
  noRateLimitHeaders(t, res);
  await logged(node, /failed to get usage: connection refused/);
});

test.serial('redis: a Redis that dies and restarts, fault_tolerant false then true (policies/init.lua, handler.lua:136)', async (t) => {
  const strict = '/redis-killed-strict';
  const tolerant = '/redis-killed-tolerant';
  t.is((await get(node, strict)).headers['x-ratelimit-remaining-minute'], '5');
  t.is((await get(node, tolerant)).headers['x-ratelimit-remaining-minute'], '5');

  await faultRedis.kill();
  const down = await get(node, strict);
  t.is(down.status, 500);
  noRateLimitHeaders(t, down);
  const served = await get(node, tolerant);
  t.is(served.status, 200);
  noRateLimitHeaders(t, served);

  // a restarted Redis is empty; the node's pooled connection to the old one fails once
  await faultRedis.restart();
  for (const path of [strict, tolerant]) {
    await pollUntil(`${path} counting again`, async () => (await get(node, path)).headers['x-ratelimit-remaining-minute'] !== undefined);
  }
  t.is(await faultRedis.command('GET', `ratelimit:${EMPTY_UUID}:${serviceIds.get('redis-killed-strict')}:127.0.0.1:${MINUTE_START}:minute`), '1');
});

test('redis: ssl_verify true refuses a certificate no trusted CA signed (policies/init.lua:99)', async (t) => {
  // first a connection to the same Redis without the check, back in its pool once answered
  const unverified = await get(node, '/redis-ssl-unverified');
  t.is(unverified.headers['x-ratelimit-limit-minute'], '6');
  for (let i = 0; i < 3; i++) {
    const res = await get(node, '/redis-ssl-verify');
    t.is(res.status, 200);
    noRateLimitHeaders(t, res);
  }
  await logged(node, /failed to do ssl handshake/);
});

test('redis: ssl_verify true counts once KONG_LUA_SSL_TRUSTED_CERTIFICATE trusts the CA (nginx_kong_inject.lua:3-5)', async (t) => {
  // kong/conf_loader/parse.lua: a path, read and combined into <prefix>/.ca_combined
  const trusting = await startTestNode({
    ...nodeOptions,
    luaSslTrustedCertificate: [join(certDir, 'redis.crt')],
    snapshot: {
      services: [{ name: 'verified', url: `${upstream.url}/always_200` }],
      routes: [{ service: 'verified', paths: ['/verified'] }],
      plugins: [plugin('rate-limiting', {}, {
        minute: 6, limit_by: 'service', policy: 'redis', fault_tolerant: false,
        redis: { host: '127.0.0.1', port: redis.tlsPort, ssl: true, ssl_verify: true, server_name: 'localhost', database: REDIS_DATABASE },
      })],
    },
  });
  t.teardown(() => trusting.dispose());
  const first = await get(trusting, '/verified');
  t.is(first.status, 200);
  t.is(first.headers['x-ratelimit-remaining-minute'], '5');
  // Kong increments in a timer (rate-limiting/handler.lua:208-216, sync_rate -1): a request
  // right after may still read 5; the count lands in Redis over the verified connection.
  await pollUntil('the verified count in Redis', async () => Number((await get(trusting, '/verified')).headers['x-ratelimit-remaining-minute']) < 5);
  t.regex(readFileSync(join(trusting.prefix, 'nginx.conf'), 'utf8'), /^\s*lua_ssl_trusted_certificate '.*\/\.ca_combined';$/m);
});

test('redis: AUTH with the password, or the username and the password (policies/init.lua:120-133)', async (t) => {
  for (const path of ['/redis-auth-password', '/redis-auth-username']) {
    const res = await get(node, path);
    t.is(res.status, 200, path);
    t.is(res.headers['x-ratelimit-remaining-minute'], '5', path);
  }
  const [, keys] = await authRedis.commands(['SELECT', 3], ['KEYS', 'ratelimit:*']);
  t.is((keys as string[]).length, 2);
});

test.serial(`redis with sync_rate: blocks if exceeding limit (${ACCESS}:1283)`, async (t) => {
  const key = `ratelimit:${EMPTY_UUID}:${serviceIds.get('redis-sync-rate')}:127.0.0.1:${MINUTE_START}:minute`;
  t.is(await redisGet(redis, key), null, 'nothing counted yet');
  try {
    for (let i = 0; i < 8; i++) await get(node, '/redis-sync-rate');
    t.is((await get(node, '/redis-sync-rate')).status, 429, 'exceeded locally');
    // the first request read the count with INCR: the key is there at once
    t.is(await redisGet(redis, key), '1');
    // the next minute is a new window
    await setClock(node, T0 + 60_000);
    t.is((await get(node, '/redis-sync-rate')).status, 200);
  } finally {
    await setClock(node, T0);
  }
});

// --- POLICIES ------------------------------------------------------------------------------------

const POLICY_T = 1424217600; // POLICIES:187, seconds
const LOCAL_T = 1553263548; // POLICIES:65, seconds
const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
const EXPIRATION = { second: 1, minute: 60, hour: 3600, day: 86400, month: 2592000, year: 31536000 };

/** kong/tools/timestamp.lua get_timestamps, for the instants the policies spec uses. */
function periodStart(seconds: number, period: (typeof PERIODS)[number]): number {
  const d = new Date(seconds * 1000);
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
  const [h, min, s] = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  return {
    second: Date.UTC(y, m, day, h, min, s),
    minute: Date.UTC(y, m, day, h, min),
    hour: Date.UTC(y, m, day, h),
    day: Date.UTC(y, m, day),
    month: Date.UTC(y, m, 1),
    year: Date.UTC(y, 0, 1),
  }[period];
}

function policiesSnapshot(): SnapshotInput {
  const services: Array<{ id?: string; name: string; url: string }> = [];
  const routes: Array<{ service: string; paths: string[] }> = [];
  const plugins: ReturnType<typeof plugin>[] = [];
  const add = (name: string, config: Record<string, unknown>) => {
    const id = randomUUID();
    serviceIds.set(name, id);
    services.push({ id, name, url: `${upstream.url}/always_200` });
    routes.push({ service: name, paths: [`/${name}`] });
    plugins.push(plugin('rate-limiting', { service: name }, { limit_by: 'ip', ...config }));
  };
  add('local-ttl', { minute: 100, hour: 100 });
  add('local-expires', { second: 100 });
  add('local-refused', { second: 100, minute: 2 });
  for (const syncRate of [0.5, -1]) {
    for (const period of PERIODS) {
      add(`redis-${syncRate}-${period}`, { [period]: 100, policy: 'redis', sync_rate: syncRate, redis: { host: '127.0.0.1', port: redis.port, database: 0 } });
    }
  }
  services.push({ name: 'probe', url: upstream.url });
  routes.push({ service: 'probe', paths: ['/probe'] });
  plugins.push({ name: 'rl-counter-probe', service: 'probe', config: {} });
  return { services, routes, plugins };
}

async function redisGet(server: RedisServer, key: string, database = REDIS_DATABASE): Promise<unknown> {
  const [, value] = await server.commands(['SELECT', database], ['GET', key]);
  return value;
}

async function shmCounter(key: string, flushExpired = false): Promise<{ value?: number; ttl?: number; err?: string }> {
  return (await get(policiesNode, `/probe?key=${encodeURIComponent(key)}${flushExpired ? '&flush=1' : ''}`)).json;
}

test.serial(`local: sets the TTL equal to one period when incrementing (${POLICIES}:64)`, async (t) => {
  await setClock(policiesNode, LOCAL_T * 1000);
  const res = await get(policiesNode, '/local-ttl');
  t.is(res.status, 200);
  const serviceId = serviceIds.get('local-ttl');
  const keyOf = (period: 'minute' | 'hour') => `ratelimit:${EMPTY_UUID}:${serviceId}:127.0.0.1:${periodStart(LOCAL_T, period)}:${period}`;
  const minute = await shmCounter(keyOf('minute'));
  const hour = await shmCounter(keyOf('hour'));
  t.is(minute.value, 1);
  t.true(minute.ttl! > 55 && minute.ttl! <= 60, `minute TTL ${minute.ttl}`);
  t.true(hour.ttl! > 3555 && hour.ttl! <= 3600, `hour TTL ${hour.ttl}`);
});

test.serial(`local: expires after due time (${POLICIES}:82)`, async (t) => {
  await setClock(policiesNode, LOCAL_T * 1000);
  t.is((await get(policiesNode, '/local-expires')).status, 200);
  const serviceId = serviceIds.get('local-expires');
  const key = `ratelimit:${EMPTY_UUID}:${serviceId}:127.0.0.1:${periodStart(LOCAL_T, 'second')}:second`;
  const counted = await shmCounter(key);
  t.is(counted.value, 1);
  t.true(counted.ttl! > 0 && counted.ttl! <= 1, `TTL ${counted.ttl}`);
  // nginx's own clock runs the shared dict's TTL: the test clock holds still, the entry goes
  const start = Date.now();
  await pollUntil('the counter to expire', async () => (await shmCounter(key, true)).err === 'not found', { timeoutMs: 3000, intervalMs: 50 });
  t.true(Date.now() - start >= 800, 'not before its second is over');
});

// The local policy counts first and takes a refused request back out: what the dict holds must
// stay what Kong's get-then-count leaves (a refused request is not counted, handler.lua:194-201
// before the increment at :208-216; a key is made only by a counted request, with its TTL, :308).
test.serial('local: a refused request is not counted and makes no key (handler.lua:194-216, policies/init.lua:308)', async (t) => {
  await setClock(policiesNode, LOCAL_T * 1000);
  const serviceId = serviceIds.get('local-refused');
  const keyOf = (period: 'second' | 'minute', at: number) =>
    `ratelimit:${EMPTY_UUID}:${serviceId}:127.0.0.1:${periodStart(at, period)}:${period}`;
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await get(policiesNode, '/local-refused');
    remaining.push([res.status, res.headers['x-ratelimit-remaining-minute'], res.headers['x-ratelimit-remaining-second']].join(' '));
  }
  t.deepEqual(remaining, ['200 1 99', '200 0 98', '429 0 98']);
  t.is((await shmCounter(keyOf('minute', LOCAL_T))).value, 2);
  t.is((await shmCounter(keyOf('second', LOCAL_T))).value, 2);

  // the next second, the minute still exhausted: refused, and no key for that second
  await setClock(policiesNode, (LOCAL_T + 1) * 1000);
  const refused = await get(policiesNode, '/local-refused');
  t.is(refused.status, 429);
  t.is(refused.headers['x-ratelimit-remaining-second'], '100');
  t.is((await shmCounter(keyOf('second', LOCAL_T + 1))).err, 'not found');
  t.is((await shmCounter(keyOf('minute', LOCAL_T))).value, 2);
});

for (const syncRate of [0.5, -1]) {
  for (const period of PERIODS) {
    // "second" keys expire too soon to check the batched increment (POLICIES:231)
    if (period === 'second' && syncRate !== -1) continue;
    test.serial(`redis with sync rate ${syncRate}, period ${period}: increase & usage (${POLICIES}:215)`, async (t) => {
      await setClock(policiesNode, POLICY_T * 1000);
      const name = `redis-${syncRate}-${period}`;
      const serviceId = serviceIds.get(name);
      const key = `ratelimit:${EMPTY_UUID}:${serviceId}:127.0.0.1:${periodStart(POLICY_T, period)}:${period}`;
      t.is(await redisGet(redis, key, 0), null);
      for (let i = 1; i <= 3; i++) {
        const res = await get(policiesNode, `/${name}`);
        t.is(res.status, 200);
        // the count in Redis is i once the request is counted (batched: once the sync ran)
        await pollUntil(`${key} = ${i}`, async () => (await redisGet(redis, key, 0)) === String(i), { timeoutMs: 5000, intervalMs: 50 });
      }
      const ttl = await redis.command('TTL', key);
      t.true(typeof ttl === 'number' && ttl > 0 && ttl <= EXPIRATION[period], `TTL ${String(ttl)}`);
    });
  }
}
