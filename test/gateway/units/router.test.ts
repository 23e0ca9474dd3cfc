import test from 'ava';
import { Router } from '../../../gateway/local/proxy/router.ts';
import type { Route, Service } from '../../../gateway/local/control-plane/db/entities.ts';

// The traditional_compatible router of Kong 3.9.3 (kong/router/transform.lua get_priority,
// kong/router/atc.lua): the most specific route wins whatever the order routes were created in.

const service: Service = {
  id: 's', name: 's', protocol: 'http', host: 'upstream', port: 80, path: null, retries: 0,
  connect_timeout: 1000, write_timeout: 1000, read_timeout: 1000, enabled: true, tags: null,
  client_certificate: null, tls_verify: null, tls_verify_depth: null, ca_certificates: null, created_at: 0, updated_at: 0,
};

let created = 0;
function route(name: string, fields: Partial<Route>): Route {
  created += 1;
  return {
    id: name, name, service: { id: 's' }, protocols: ['http', 'https'], methods: null, hosts: null, paths: null, headers: null,
    strip_path: true, preserve_host: false, regex_priority: 0, path_handling: 'v0', https_redirect_status_code: 426,
    request_buffering: true, response_buffering: true, snis: null, sources: null, destinations: null, tags: null,
    created_at: created, updated_at: created, ...fields,
  };
}

const router = new Router(
  [
    route('root', { paths: ['/'] }),
    route('v1', { paths: ['/v1/'] }),
    route('get-pet', { paths: ['/v1/pets/'], methods: ['GET', 'HEAD'] }),
    route('regex', { paths: ['~/v1/orders/(?<id>\\d+)$'] }),
    route('hosted', { paths: ['/v1/'], hosts: ['api.example'] }),
    route('wild', { paths: ['/'], hosts: ['*.example'] }),
    route('versioned', { paths: ['/v1/'], headers: { 'x-version': ['2'] } }),
  ],
  new Map([['s', service]]),
);
const match = (path: string, extra: { method?: string; host?: string; headers?: Record<string, string> } = {}) =>
  router.match({ method: extra.method ?? 'GET', path, host: extra.host ?? 'localhost', headers: new Map(Object.entries(extra.headers ?? {})) })?.route.name;

test('the longest prefix wins over shorter ones, whatever the creation order', (t) => {
  t.is(match('/v1/pets'), 'v1');
  t.is(match('/v1/pets/7'), 'get-pet');
  t.is(match('/elsewhere'), 'root');
});

test('methods, hosts and headers add to a route\'s priority', (t) => {
  t.is(match('/v1/pets/7', { method: 'DELETE' }), 'v1', 'get-pet is GET/HEAD only');
  t.is(match('/v1/pets', { host: 'api.example' }), 'hosted');
  t.is(match('/v1/pets', { host: 'api.example:8000' }), 'hosted', 'the port does not take part');
  t.is(match('/v1/pets', { headers: { 'x-version': '2' } }), 'versioned');
  t.is(match('/anything', { host: 'shop.example' }), 'wild');
});

test('a regex path matches anchored at the start and returns its captures', (t) => {
  const found = router.match({ method: 'GET', path: '/v1/orders/42', host: 'localhost', headers: new Map() });
  t.is(found?.route.name, 'regex');
  t.deepEqual({ ...found?.captures }, { id: '42' });
  t.is(match('/v1/orders/42/approve'), 'v1');
});

test('no route: undefined (the lifecycle answers Kong\'s 404)', (t) => {
  const bare = new Router([route('only', { paths: ['/only'] })], new Map([['s', service]]));
  t.is(bare.match({ method: 'GET', path: '/other', host: 'x', headers: new Map() }), undefined);
});
