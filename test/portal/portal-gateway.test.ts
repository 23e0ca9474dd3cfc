// The developer portal behind the gateway (gateway/kong.yml's animal-store-portal service): its
// pages under /portal/ without a key, /portal sent there, a sign-up whose key then calls the API,
// and the per-IP limit of the sign-up and sign-in POSTs (429 from the gateway, before the portal).
import test from 'ava';
import { PortalBrowser, shownKey, startPortalBehindGateway, type TestPortal } from '../helpers/portal.ts';
import type { TestStack } from '../helpers/stack.ts';

let stack: TestStack;
let portal: TestPortal;

test.before(async () => {
  ({ stack, portal } = await startPortalBehindGateway({ stackClock: true }));
});

test.after.always(async () => {
  await portal?.dispose();
  await stack?.dispose();
});

test.serial('through the gateway: no key needed for the pages, and the key from sign-up calls GET /v1/pets', async (t) => {
  const b = new PortalBrowser(stack.gateway.proxyUrl);
  const form = await b.get('/portal/signup');
  t.is(form.status, 200);
  t.regex(form.headers.get('x-ratelimit-limit-minute') ?? '', /^120$/, "the portal service's per-IP limit");
  const created = await b.post('/portal/signup', { email: 'gw@example.com', name: 'Gateway', password: 'a passphrase through kong' });
  t.is(created.status, 201);
  t.is(created.headers.get('x-ratelimit-limit-minute'), '10', 'the sign-in route has its own, lower limit');
  const key = shownKey(created);
  t.truthy(key);
  t.is((await stack.call('/v1/pets', { key })).status, 200);
  // the portal saw the client's address as Kong appended it, not the one the client claimed
  t.regex(portal.audit.at(-1)!, /"ip":"127\.0\.0\.1"/);
  t.is((await stack.call('/v1/pets/999999', { key })).status, 404);
  const dashboard = await b.get('/portal/');
  t.is(dashboard.status, 200);
  t.regex(dashboard.text, /Plan <strong>free<\/strong>/);
  // the requests just made, from the data plane's /metrics (policy local: no current windows)
  t.regex(dashboard.text, /policy local: the counters live in each Kong node&#39;s memory/);
  t.regex(dashboard.text, /<caption>Requests since the gateway started<\/caption>.*<tbody><tr><td>2<\/td><td>1<\/td><td>1<\/td><td>0<\/td><td>0<\/td><\/tr>/s);
  const css = await fetch(`${stack.gateway.proxyUrl}/portal/assets/portal.css`);
  t.is(css.status, 200);
  t.regex(css.headers.get('content-type')!, /^text\/css/);
});

test.serial('/portal, as a browser\'s user types it, is redirected to /portal/ by the gateway (301); /portalx is not the portal\'s', async (t) => {
  for (const method of ['GET', 'HEAD']) {
    const response = await fetch(`${stack.gateway.proxyUrl}/portal`, { method, redirect: 'manual' });
    t.is(response.status, 301, method);
    t.is(response.headers.get('location'), '/portal/', method);
  }
  // followed, it is the portal's (which sends a browser that has not signed in on to its sign-in page)
  const followed = await fetch(`${stack.gateway.proxyUrl}/portal`);
  t.is(followed.status, 200);
  t.regex(new URL(followed.url).pathname, /^\/portal\//);
  t.regex(followed.headers.get('content-type') ?? '', /^text\/html/);
  const other = await fetch(`${stack.gateway.proxyUrl}/portalx`, { redirect: 'manual' });
  t.is(other.status, 404);
  t.is(((await other.json()) as { code: string }).code, 'not_found');
});

test.serial('a sign-up and sign-in flood from one address gets 429 from the gateway', async (t) => {
  await stack.clock.advance(60_000); // a fresh minute
  const b = new PortalBrowser(stack.gateway.proxyUrl);
  await b.get('/portal/signin');
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await b.post(i % 2 ? '/portal/signup' : '/portal/signin', { email: `flood${i}@example.com`, password: 'x' })).status);
  t.deepEqual(statuses.slice(10), [429, 429]);
  t.false(statuses.slice(0, 10).includes(429));
  // the pages themselves still answer
  t.is((await b.get('/portal/signin')).status, 200);
});
