import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { runCli, runCliInProcess } from '../helpers/cli.ts';
import { startFakeKongAdmin, type FakeKongAdmin } from '../helpers/fake-kong-admin.ts';
import { startFakeKongNode, type FakeKongNode } from '../helpers/prometheus.ts';

// `consumers usage` without Prometheus: it scrapes each Kong node's /metrics (the Status API) and
// sums the counters across nodes; these are totals since each node started, and it says so.
let admin: FakeKongAdmin;
let a: FakeKongNode;
let b: FakeKongNode;
let run: (args: string[], env?: NodeJS.ProcessEnv) => ReturnType<typeof runCliInProcess>;

test.before(async () => {
  admin = await startFakeKongAdmin();
  admin.addConsumer('alice');
  admin.addConsumer('bob', { tags: ['petstore-consumer', 'plan:pro'], plan: { minute: 300, day: 10000 } });
  admin.addConsumer('carol', { tags: ['petstore-consumer', 'plan:enterprise'], plan: { minute: 5000, day: 2000000 } });
  admin.addConsumer('animal-store-anonymous', { tags: ['animal-store'], plan: { minute: 30, day: 500, limit_by: 'ip' } });
  admin.addConsumer('o"brien\\x', { tags: ['petstore-consumer', 'plan:free'] });
  [a, b] = [await startFakeKongNode('11111111-1111-4111-8111-111111111111'), await startFakeKongNode('22222222-2222-4222-8222-222222222222')];
  a.requests({ consumer: 'alice', code: 200, n: 7 });
  b.requests({ consumer: 'alice', code: 200, n: 3 });
  b.requests({ consumer: 'alice', code: 404, n: 2 });
  b.requests({ consumer: 'alice', code: 429, n: 4 });
  b.requests({ consumer: 'alice', code: 500, n: 1 });
  a.requests({ consumer: 'bob', code: 201, n: 5 });
  b.bansStarted('bob', 1);
  b.bannedRequests('bob', 6);
  a.requests({ consumer: 'animal-store-anonymous', code: 401, n: 9 });
  a.checksumFailures(2);
  b.requests({ consumer: 'dave', code: 200, n: 1 });
  a.requests({ consumer: 'o"brien\\x', code: 304, n: 2, route: 'animal-store-v1-get-pet' });
  // Another team on the same gateway (test/fixtures/team-inventory/kong.yml): its consumer, on its
  // service and refused on ours (animal-store-access), a consumer of theirs since deleted, and
  // alice on their service (their key-auth found our credential). None of it is our usage.
  admin.addConsumer('inventory-warehouse', { tags: ['team-inventory'], plan: { minute: 10, day: 100 } });
  a.requests({ consumer: 'inventory-warehouse', code: 200, n: 8, service: 'inventory', route: 'inventory-private' });
  b.requests({ consumer: 'inventory-warehouse', code: 403, n: 1 });
  b.requests({ consumer: 'inventory-gone', code: 200, n: 3, service: 'inventory', route: 'inventory-private' });
  a.requests({ consumer: 'alice', code: 200, n: 5, service: 'inventory', route: 'inventory-private' });
  run = (args, env = {}) => runCliInProcess(['usage', '--status-url', a.statusUrl, '--status-url', b.statusUrl, ...args], { KONG_ADMIN_URL: admin.url, ...env });
});
test.after.always(async () => {
  await Promise.all([admin?.close(), a?.dispose(), b?.dispose()]);
});

const NOTE = 'totals since each node started';
const row = (username: string, plan: string | null, limits: [number, number] | null, counts: Partial<Record<string, number>>) => {
  const classes = { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0, other: 0, banned: 0, ...counts };
  const requests = Object.values(classes).reduce((sum, n) => sum + n, 0);
  const [limit_minute, limit_day] = limits ?? [null, null];
  return { username, plan, limit_minute, limit_day, requests, ...classes, from: null, note: NOTE };
};

test('json: one object per consumer, counters summed over the nodes, busiest first', async (t) => {
  const result = await run(['--format', 'json']);
  t.is(result.code, 0, result.stderr);
  // Keys in the csv's order (JSON.parse below would move "429" first again).
  t.true(
    result.stdout.startsWith(
      '[{"username":"alice","plan":"free","limit_minute":60,"limit_day":1000,"requests":17,"2xx":10,"4xx":2,"429":4,"5xx":1,"other":0,"banned":0,"from":null,"to":"',
    ),
    result.stdout,
  );
  const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
  for (const r of rows) t.regex(r.to as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
  t.deepEqual(
    rows.map(({ to: _to, ...r }) => r),
    [
      row('alice', 'free', [60, 1000], { '2xx': 10, '4xx': 2, '429': 4, '5xx': 1 }),
      row('bob', 'pro', [300, 10000], { '2xx': 5, banned: 6 }),
      // kong.yml's anonymous consumer (keyless requests): limits per IP from its own plugin, no plan tag.
      row('animal-store-anonymous', null, [30, 500], { '4xx': 9 }),
      row('o"brien\\x', 'free', [60, 1000], { other: 2 }),
      row('dave', null, null, { '2xx': 1 }),
    ],
  );
  // Banned requests are Kong's 429s with consumer "": no one's row counts them twice, and the
  // checksum failures (401, consumer "") are no one's.
  t.is(
    result.stderr,
    `note: these are ${NOTE} (2 nodes), not a window: give --prometheus-url or PROMETHEUS_URL for --since and --by day\n` +
      'note: consumer dave is not in the Admin API (deleted?): its usage is shown without a plan\n',
  );
});

test('table: what was counted, then one line per consumer', async (t) => {
  const result = await run([]);
  t.is(result.code, 0, result.stderr);
  t.is(
    result.stdout,
    [
      `${NOTE} (${a.statusUrl}/metrics, ${b.statusUrl}/metrics)`,
      'USERNAME                PLAN  LIMITS              REQUESTS  2XX  4XX  429  5XX  OTHER  BANNED',
      '----------------------  ----  ------------------  --------  ---  ---  ---  ---  -----  ------',
      'alice                   free  60/min, 1000/day    17        10   2    4    1    0      0',
      'bob                     pro   300/min, 10000/day  11        5    0    0    0    0      6',
      'animal-store-anonymous  -     30/min, 500/day     9         0    9    0    0    0      0',
      'o"brien\\x               free  60/min, 1000/day    2         0    0    0    0    2      0',
      'dave                    -     -                   1         1    0    0    0    0      0',
      '',
    ].join('\n'),
  );
  t.regex(result.stderr, /^note: these are totals since each node started \(2 nodes\), not a window/);
});

test('csv: a header and the same columns as json, quoted where needed', async (t) => {
  const result = await run(['--format', 'csv']);
  t.is(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n');
  t.is(lines[0], 'username,plan,limit_minute,limit_day,requests,2xx,4xx,429,5xx,other,banned,from,to,note');
  t.regex(lines[1]!, /^alice,free,60,1000,17,10,2,4,1,0,0,,\d{4}-[^,]+Z,totals since each node started$/);
  t.regex(lines[4]!, /^"o""brien\\x",free,60,1000,2,0,0,0,0,2,0,,/);
  t.regex(lines[5]!, /^dave,,,,1,1,0,0,0,0,0,,/);
  t.is(lines.length, 6);
});

test("another team's consumers and services are not counted: no rows of theirs, none of our consumers' requests there", async (t) => {
  const result = await run(['--format', 'json']);
  t.is(result.code, 0, result.stderr);
  const rows = JSON.parse(result.stdout) as Array<{ username: string; requests: number }>;
  t.deepEqual(
    rows.map((r) => [r.username, r.requests]),
    [
      ['alice', 17],
      ['bob', 11],
      ['animal-store-anonymous', 9],
      ['o"brien\\x', 2],
      ['dave', 1],
    ],
  );
  t.notRegex(result.stderr, /inventory/);
  // their consumer's plan is not read
  const theirs = admin.consumers.find((c) => c.username === 'inventory-warehouse')!;
  t.false(admin.requests.includes(`GET /consumers/${theirs.id}/plugins`));
  const one = await run(['inventory-warehouse']);
  t.is(one.code, 1);
  t.is(one.stderr, "error: consumer inventory-warehouse is another team's (neither petstore-consumer nor animal-store): usage counts ours only\n");
  t.is(one.stdout, '');
});

test('table: control and format characters of a name are shown as \\u{…}, one line per row; csv and json keep them', async (t) => {
  // a name the CLI refuses (consumer-options), made through the Admin API, where Kong takes any string
  const username = 'ctl\nrow\r\u0000\u007f\u202eX';
  const own = await startFakeKongAdmin();
  const node = await startFakeKongNode('33333333-3333-4333-8333-333333333333');
  t.teardown(() => Promise.all([own.close(), node.dispose()]));
  own.addConsumer(username);
  node.requests({ consumer: username, code: 200, n: 2 });
  const usage = (...args: string[]) => runCliInProcess(['usage', '--status-url', node.statusUrl, ...args], { KONG_ADMIN_URL: own.url });

  const table = await usage();
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.is(lines.length, 4, table.stdout);
  t.regex(lines[3]!, /^ctl\\u\{a\}row\\u\{d\}\\u\{0\}\\u\{7f\}\\u\{202e\}X {2}free {2}60\/min, 1000\/day {2}2 /);
  t.is((JSON.parse((await usage('--json')).stdout) as Array<{ username: string }>)[0]?.username, username);
  const csv = (await usage('--format', 'csv')).stdout;
  t.true(csv.includes(`\n"${username}",free,`), 'csv quotes the field and keeps it');
});

test('csv: a cell that could start a formula gets a leading quote (OWASP CSV injection); json keeps the name', async (t) => {
  const own = await startFakeKongAdmin();
  const node = await startFakeKongNode('44444444-4444-4444-8444-444444444444');
  t.teardown(() => Promise.all([own.close(), node.dispose()]));
  const names = ['=HYPERLINK("http://evil.example","x")', '+1', '-2+3', '@SUM(A1)', '\tcmd', 'plain'];
  for (const name of names) {
    own.addConsumer(name);
    node.requests({ consumer: name, code: 200, n: 1 });
  }
  const usage = (...args: string[]) => runCliInProcess(['usage', '--status-url', node.statusUrl, ...args], { KONG_ADMIN_URL: own.url });

  const cells = (await usage('--format', 'csv')).stdout.trimEnd().split('\n').slice(1).map((line) => line.slice(0, line.indexOf(',free,')));
  t.deepEqual(cells.sort(), ['"\'+1"', '"\'-2+3"', '"\'=HYPERLINK(""http://evil.example"",""x"")"', '"\'@SUM(A1)"', '"\'\tcmd"', 'plain'].sort());
  const json = JSON.parse((await usage('--json')).stdout) as Array<{ username: string }>;
  t.deepEqual(json.map((row) => row.username).sort(), [...names].sort());
});

test('one consumer: its row, even without requests', async (t) => {
  const alice = await run(['alice', '--json']);
  t.is(alice.code, 0, alice.stderr);
  t.like(JSON.parse(alice.stdout), [{ username: 'alice', requests: 17, '429': 4 }]);
  const carol = await run(['carol', '--format', 'json']);
  t.is(carol.code, 0, carol.stderr);
  t.like(JSON.parse(carol.stdout), [{ username: 'carol', plan: 'enterprise', limit_minute: 5000, limit_day: 2000000, requests: 0 }]);
  const quoted = await run(['o"brien\\x', '--json']);
  t.is(quoted.code, 0, quoted.stderr);
  t.like(JSON.parse(quoted.stdout), [{ username: 'o"brien\\x', plan: 'free', other: 2 }]);
  // One consumer is two Admin API reads, not a listing of every consumer.
  t.false(admin.requests.some((r) => r.startsWith('GET /consumers?') && r.includes('carol')));
});

test('many consumers: plans come from two listings, not two calls per consumer', async (t) => {
  const admin = await startFakeKongAdmin();
  const node = await startFakeKongNode();
  t.teardown(() => Promise.all([admin.close(), node.dispose()]));
  for (let i = 0; i < 30; i++) {
    admin.addConsumer(`c${String(i).padStart(2, '0')}`, i % 2 ? undefined : { tags: ['petstore-consumer', 'plan:pro'], plan: { minute: 300, day: 10000 } });
    node.requests({ consumer: `c${String(i).padStart(2, '0')}`, code: 200, n: i + 1 });
  }
  node.requests({ consumer: 'animal-store-anonymous', code: 401, n: 1 });
  admin.addConsumer('animal-store-anonymous', { tags: ['animal-store'], plan: { minute: 30, day: 500, limit_by: 'ip' } });
  const result = await runCliInProcess(['usage', '--status-url', node.statusUrl, '--json'], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 0, result.stderr);
  const rows = JSON.parse(result.stdout) as Array<{ username: string; plan: string | null; limit_minute: number | null; requests: number }>;
  t.is(rows.length, 31);
  t.like(rows[0], { username: 'c29', plan: 'free', limit_minute: 60, requests: 30 });
  t.like(rows[1], { username: 'c28', plan: 'pro', limit_minute: 300, requests: 29 });
  t.like(rows.find((r) => r.username === 'animal-store-anonymous'), { plan: null, limit_minute: 30 });
  const anonymous = admin.consumers.find((c) => c.username === 'animal-store-anonymous')!;
  // The one consumer the CLI does not manage is read on its own.
  t.deepEqual(admin.requests, [
    'GET /plugins?tags=petstore-consumer&size=1000',
    'GET /consumers?tags=petstore-consumer&size=1000',
    'GET /consumers/animal-store-anonymous',
    `GET /consumers/${anonymous.id}/plugins`,
  ]);
});

test('the same node given twice is refused, naming both: a billing export must not count it twice', async (t) => {
  const port = new URL(a.statusUrl).port;
  for (const [first, second] of [
    [a.statusUrl, `${a.statusUrl}/`],
    [`${a.statusUrl}/metrics`, a.statusUrl],
  ]) {
    const result = await runCliInProcess(['usage', '--status-url', first!, '--status-url', b.statusUrl, '--status-url', second!], { KONG_ADMIN_URL: admin.url });
    t.is(result.code, 2);
    t.is(result.stderr, `error: --status-url ${first} and ${second} are the same Status API: its node would be counted twice (see usage --help)\n`);
    t.is(result.stdout, '');
  }
  // two addresses of one node: each node's kong_node_info names it (kong/plugins/prometheus/exporter.lua)
  const alias = `http://localhost:${port}`;
  const result = await runCliInProcess(['usage', '--status-url', a.statusUrl, '--status-url', alias], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 2);
  t.is(
    result.stderr,
    `error: --status-url ${a.statusUrl}/metrics and ${alias}/metrics are the same Kong node (node_id ${a.nodeId}): its requests would be counted twice (see usage --help)\n`,
  );
  t.is(result.stdout, '');
});

test('a node that is down is one line and exit 1', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const result = await run(['--status-url', `http://127.0.0.1:${port}`]);
  t.is(result.code, 1);
  t.is(result.stderr, `error: cannot reach the Kong Status API at http://127.0.0.1:${port}/metrics: ECONNREFUSED\n`);
  t.is(result.stdout, '');
});

test('a node that closes the connection without answering is asked once more; twice is one line and exit 1', async (t) => {
  // as a kept-alive connection the node closes just as it is reused
  let requests = 0;
  let dropFirst = 1;
  const server = createServer((req, res) => {
    requests += 1;
    if (requests <= dropFirst) return void req.socket.destroy();
    void fetch(`${a.statusUrl}/metrics`).then(async (answer) => res.end(await answer.text()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const once = await runCliInProcess(['usage', 'alice', '--json', '--status-url', url], { KONG_ADMIN_URL: admin.url });
  t.is(once.code, 0, once.stderr);
  t.like(JSON.parse(once.stdout), [{ username: 'alice', requests: 7 }]);
  t.is(requests, 2);

  requests = 0;
  dropFirst = Infinity;
  const always = await runCliInProcess(['usage', 'alice', '--status-url', url], { KONG_ADMIN_URL: admin.url });
  t.is(always.code, 1);
  t.is(always.stderr, `error: cannot reach the Kong Status API at ${url}/metrics: the connection closed without an answer, twice\n`);
  t.is(requests, 2, 'asked twice, not more');
});

test('a /metrics that is not the exposition format: which node, which line, exit 1', async (t) => {
  const server = createServer((req, res) =>
    req.url === '/metrics' ? res.end('# HELP x y\nkong_http_requests_total{consumer="a} 1\n') : res.writeHead(404).end('{"message":"Not found"}'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result = await runCliInProcess(['usage', '--status-url', url], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 1);
  t.is(result.stderr, `error: ${url}/metrics line 2: label consumer: the value is not closed\n`);
  const notFound = await runCliInProcess(['usage', '--status-url', `${url}/status`], { KONG_ADMIN_URL: admin.url });
  t.is(notFound.code, 1);
  t.is(notFound.stderr, `error: the Kong Status API at ${url}/status/metrics answered 404\n`);
});

test('without per_consumer, Kong counts no one: usage says what to turn on', async (t) => {
  const node = await startFakeKongNode();
  t.teardown(() => node.dispose());
  node.requests({ consumer: '', code: 200, n: 3 });
  const result = await runCliInProcess(['usage', '--status-url', node.statusUrl], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /\nno requests in this window\n$/);
  t.regex(result.stderr, /\nnote: kong_http_requests_total carries no consumer: turn on per_consumer in the prometheus plugin's config\n$/);
  const empty = await startFakeKongNode();
  t.teardown(() => empty.dispose());
  const none = await runCliInProcess(['usage', '--status-url', empty.statusUrl], { KONG_ADMIN_URL: admin.url });
  t.regex(none.stderr, /\nnote: no kong_http_requests_total at all: is Kong's prometheus plugin on, with status_code_metrics\?\n$/);
});

test('process: stdout has the rows, stderr the note, exit 0', async (t) => {
  const result = await runCli(['usage', '--status-url', a.statusUrl, '--status-url', b.statusUrl, '--format', 'csv'], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 0, result.stderr);
  t.true(result.stdout.startsWith('username,plan,'));
  t.regex(result.stderr, /^note: these are totals since each node started/);
});

/** A server that only counts requests: a usage error must reach nothing. */
async function counting(t: { teardown: (fn: () => void) => void }) {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

const USAGE_ERRORS: Array<[string[], NodeJS.ProcessEnv, string]> = [
  [['--since', '7d'], {}, '--since needs Prometheus (--prometheus-url or PROMETHEUS_URL): a node keeps only its totals since it started'],
  [['--by', 'day', '--until', '2030-01-01'], {}, '--until, --by need Prometheus (--prometheus-url or PROMETHEUS_URL): a node keeps only its totals since it started'],
  [['--format', 'xml'], {}, "option '--format <format>' argument 'xml' is invalid. Allowed choices are table, csv, json."],
  [['--by', 'week'], {}, "option '--by <period>' argument 'week' is invalid. Allowed choices are day."],
  [['--json', '--format', 'csv'], {}, '--json and --format csv disagree: give one'],
  [['--prometheus-url', 'P', '--since', '5x'], {}, '--since must be a duration such as 30m, 24h, 7d or 1d12h, or a time like --until, got "5x"'],
  [['--prometheus-url', 'P', '--since', '0m'], {}, '--since must be a duration such as 30m, 24h, 7d or 1d12h, or a time like --until, got "0m"'],
  [['--prometheus-url', 'P', '--since', '2030-01-02', '--until', '2030-01-01'], {}, '--since must be before --until (2030-01-01)'],
  [['--prometheus-url', 'P', '--until', '2030-01-01T00:00:00'], {}, '--until must be a date (2030-01-31) or an ISO time with Z or an offset, got "2030-01-01T00:00:00"'],
  [['--prometheus-url', 'P', '--until', '2030-02-30'], {}, '--until must be a date (2030-01-31) or an ISO time with Z or an offset, got "2030-02-30"'],
  [['--prometheus-url', 'P', '--by', 'day', '--since', '500d'], {}, '--by day covers at most 400 days'],
  [['--prometheus-url', 'notaurl'], {}, '--prometheus-url must be an http(s) URL such as http://127.0.0.1:9090, got "notaurl"'],
  [[], { PROMETHEUS_URL: 'ftp://x' }, 'PROMETHEUS_URL must be an http(s) URL such as http://127.0.0.1:9090, got "ftp://x"'],
  [['--status-url', 'localhost:8100'], {}, '--status-url must be an http(s) URL such as http://127.0.0.1:8100, got "localhost:8100"'],
  // credentials are welcome in these URLs (Basic auth), but a malformed one is not quoted
  [['--prometheus-url', 'http://ops:s3cret@127.0.0.1:9090/?q'], {}, '--prometheus-url must be an http(s) URL such as http://127.0.0.1:9090, got a value with "@" (not shown: it may hold a password)'],
  [['--status-url', 'ftp://ops:s3cret@127.0.0.1:8100'], {}, '--status-url must be an http(s) URL such as http://127.0.0.1:8100, got a value with "@" (not shown: it may hold a password)'],
  [['--prometheus-url', 'P', '--status-url', 'S'], {}, '--prometheus-url and --status-url are two ways to count: give one'],
  [['alice', 'bob'], {}, "too many arguments for 'usage'. Expected 1 argument but got 2."],
  [[''], {}, "command-argument value '' is invalid for argument 'username'. It must not be empty."],
];

for (const [args, env, message] of USAGE_ERRORS) {
  test(`usage error, exit 2 and one line, nothing sent: usage ${args.join(' ')} ${JSON.stringify(env)}`, async (t) => {
    const target = await counting(t);
    const fill = (arg: string) => (arg === 'P' || arg === 'S' ? target.url : arg);
    const result = await runCliInProcess(['usage', ...args.map(fill)], { KONG_ADMIN_URL: target.url, ...env });
    t.is(result.code, 2);
    t.is(result.stdout, '');
    t.is(result.stderr, `error: ${message} (see usage --help)\n`);
    t.is(target.requests(), 0);
  });
}

test('--help: the options, their defaults, exit 0', async (t) => {
  const result = await runCliInProcess(['usage', '--help']);
  t.is(result.code, 0);
  t.true(result.stdout.startsWith('Usage: npm run consumers -- usage [options] [username]\n'));
  for (const option of ['--since <when>', '--until <time>', '--by <period>', '--format <format>', '--prometheus-url <url>', '--status-url <url>']) {
    t.true(result.stdout.includes(option), option);
  }
  t.regex(result.stdout, /\(default\s+http:\/\/127\.0\.0\.1:8100\)/);
  t.regex((await runCliInProcess(['--help'])).stdout, /\n {2}usage \[options\] \[username\]/);
});
