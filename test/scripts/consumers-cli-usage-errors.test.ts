import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// Command lines the CLI cannot run well: each is one line on stderr and exit 2, before any call to
// the Admin API (the double records every request, and none arrives).

const REFUSED: Array<[args: string[], stderr: string]> = [
  [['create', '--plan', 'free', '--plan', 'pro', '--username', 'x'], "error: option '--plan <plan>' given more than once: give it once (see create --help)"],
  [['create', '--username', 'a', '--username', 'b', '--plan', 'free'], "error: option '--username <name>' given more than once: give it once (see create --help)"],
  [['show', 'x', '--admin-url', 'http://a', '--admin-url', 'http://b'], "error: option '--admin-url <url>' given more than once: give it once (see show --help)"],
  [
    ['create', '--username', '0b9a3c1e-1111-4222-8333-444455556666', '--plan', 'free'],
    'error: username "0b9a3c1e-1111-4222-8333-444455556666": Kong reads a UUID-shaped name as a consumer id, so it could never be found by name: choose another (see create --help)',
  ],
  [['create', '--username', '..', '--plan', 'free'], 'error: username "..": a URL path cannot carry it as a name (a dot segment) (see create --help)'],
  [['show', '..'], 'error: username "..": a URL path cannot carry it as a name (a dot segment) (see show --help)'],
  [['delete', '.'], 'error: username ".": a URL path cannot carry it as a name (a dot segment) (see delete --help)'],
  [['list', '--tag', ''], "error: option '--tag <tag>' argument '' is invalid. It must not be empty. (see list --help)"],
  [
    ['list', '--tag', 'a/b'],
    `error: option '--tag <tag>' argument 'a/b' is invalid. It must be a tag as Kong takes one: no ",", "/" or control character. (see list --help)`,
  ],
  ...['Transfer-Encoding: chunked', 'Content-Length: 5', 'Expect: 100-continue', 'Connection: upgrade', 'content-type: text/plain'].map(
    (header): [string[], string] => [
      ['show', 'x', '--admin-header', header],
      `error: --admin-header cannot set ${header.split(':')[0]}: the client sets it for each call (the body's framing and type, the connection) (see show --help)`,
    ],
  ),
];

test('usage errors: one line, exit 2, nothing sent', async (t) => {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  for (const [args, stderr] of REFUSED) {
    const result = await runCliInProcess(args, { KONG_ADMIN_URL: admin.url });
    t.deepEqual([result.code, result.stderr], [2, `${stderr}\n`], args.join(' '));
  }
  t.deepEqual(admin.requests, []);
});

test('options documented as repeatable still add up; a Host header still goes', async (t) => {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const created = await runCliInProcess(['create', '--username', 'rep', '--plan', 'free', '--scope', 'pets:read', '--scope', 'orders:read', '--json'], {
    KONG_ADMIN_URL: admin.url,
    KONG_ADMIN_HEADER: 'Host: admin.example',
  });
  t.is(created.code, 0, created.stderr);
  t.deepEqual(JSON.parse(created.stdout).scopes, ['pets:read', 'orders:read']);
});
