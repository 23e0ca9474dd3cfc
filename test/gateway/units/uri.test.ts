import test from 'ava';
import { escapeUri, normalizePath, upstreamPath } from '../../../gateway/local/proxy/uri.ts';

// kong/tools/uri.lua (normalize, escape) and kong/router/utils.lua get_upstream_uri_v0 (3.9.3).

test('normalizePath decodes unreserved escapes, keeps reserved ones, removes dot segments and merges slashes', (t) => {
  t.is(normalizePath('/v1/%70ets'), '/v1/pets');
  t.is(normalizePath('/v1/a%2Fb'), '/v1/a%2Fb');
  t.is(normalizePath('/v1/a%2fb'), '/v1/a%2Fb');
  t.is(normalizePath('/v1/./pets/../orders'), '/v1/orders');
  t.is(normalizePath('/v1//pets'), '/v1/pets');
  t.is(normalizePath('/../..'), '/');
});

test('escapeUri percent-encodes what may not appear in the request line', (t) => {
  t.is(escapeUri('/a b/é'), '/a%20b/%C3%A9');
  t.is(escapeUri("/keep!$&'()*+,;=:@~"), "/keep!$&'()*+,;=:@~");
});

const cases: Array<[string, string | undefined, boolean, string | null, string]> = [
  // request path, stripped prefix, strip_path, service path → upstream path
  ['/v1/pets', '/v1/', true, null, '/pets'],
  ['/v1/', '/v1/', true, null, '/'],
  ['/v1/pets/42', '/v1/pets/', true, '/pets/', '/pets/42'],
  ['/v1/pets/', '/v1/pets/', true, '/pets/', '/pets/'],
  ['/v1', '/v1', true, '/s', '/s'],
  ['/v1/', '/v1', true, '/s', '/s/'],
  ['/v1/x', '/v1', true, '/s', '/s/x'],
  ['/x', undefined, false, null, '/x'],
  ['/x', undefined, false, '/s', '/s/x'],
  ['/x', undefined, false, '/s/', '/s/x'],
  ['/', undefined, false, '/s', '/s'],
];

for (const [request, stripped, strip, service, expected] of cases) {
  test(`upstream path: ${request} (strip ${String(strip)}, prefix ${stripped ?? '-'}, service ${service ?? '/'}) → ${expected}`, (t) => {
    t.is(upstreamPath(request, stripped, strip, service), expected);
  });
}
