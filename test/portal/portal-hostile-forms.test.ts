// Hostile forms sent to the portal: bytes that are not UTF-8 (raw or %-escaped), U+0000, a CSRF
// field longer in bytes than its cookie. Each is refused 4xx with a page saying why, before any
// account is written; none reaches the gateway (the Admin API here is a closed port). And methods
// the portal does not serve: 405, never a 5xx.
import test from 'ava';
import { PortalBrowser, startTestPortal, type TestPortal } from '../helpers/portal.ts';

let portal: TestPortal;
const PASSWORD = 'correct horse battery staple';
let ips = 0;

test.before(async () => {
  portal = await startTestPortal({ adminUrl: 'http://127.0.0.1:9', apiUrl: 'http://127.0.0.1:9/v1', signUp: 'open' });
});
test.after.always(async () => {
  await portal?.dispose();
});

async function signUpPage(portal: TestPortal) {
  const b = new PortalBrowser(portal.url, `198.51.100.${++ips}`);
  await b.get('/portal/signup');
  return b;
}

/** A sign-up form whose email is `email` as given: bytes, so that it may hold anything. */
const form = (b: PortalBrowser, email: Buffer, name = 'Ada') =>
  Buffer.concat([Buffer.from(`_csrf=${b.csrf}&name=${name}&password=${encodeURIComponent(PASSWORD)}&email=`), email]);

const accounts = (portal: TestPortal) => portal.db('accounts').count({ n: '*' }).first().then((row) => Number(row?.n));

for (const [label, email] of [
  ['a raw 0xFF byte', Buffer.concat([Buffer.from([0xff]), Buffer.from('@b.co')])],
  ['a truncated sequence (0xC3 alone)', Buffer.concat([Buffer.from('a'), Buffer.from([0xc3]), Buffer.from('@b.co')])],
  ['%FF', Buffer.from('%FF@b.co')],
  ['an escaped surrogate (%ED%A0%80)', Buffer.from('a%ED%A0%80@b.co')],
  ['an escaped overlong slash (%C0%AF)', Buffer.from('a%C0%AF@b.co')],
] as const) {
  test(`sign-up with ${label} in a field is refused 400, never stored as U+FFFD`, async (t) => {
    const b = await signUpPage(portal);
    const page = await b.postBytes('/portal/signup', form(b, email));
    t.is(page.status, 400);
    t.regex(page.text, /The form is not valid UTF-8 text/);
    t.is(await accounts(portal), 0);
  });
}

test('sign-in with bytes that are not UTF-8 is refused 400 as sign-up is', async (t) => {
  const b = await signUpPage(portal);
  const page = await b.postBytes('/portal/signin', Buffer.concat([Buffer.from(`_csrf=${b.csrf}&password=x&email=`), Buffer.from([0xfe, 0x40])]));
  t.is(page.status, 400);
  t.regex(page.text, /not valid UTF-8/);
});

test('U+0000 in a field is refused 400 (PostgreSQL cannot store it)', async (t) => {
  const b = await signUpPage(portal);
  const page = await b.postBytes('/portal/signup', form(b, Buffer.from('ada@b.co'), 'A%00da'));
  t.is(page.status, 400);
  t.regex(page.text, /U\+0000/);
  t.is(await accounts(portal), 0);
});

test('UTF-8 text, escaped or raw, passes on to the form checks', async (t) => {
  const b = await signUpPage(portal);
  // "Zoë" escaped and "ü" raw; the email is invalid on purpose, so the form stops at its check
  const page = await b.postBytes('/portal/signup', form(b, Buffer.from('not-an-email-ü'), 'Zo%C3%AB'));
  t.is(page.status, 400);
  t.regex(page.text, /Enter an email address/);
  t.regex(page.text, /Zoë/);
});

test('a compressed form is refused 415', async (t) => {
  const b = await signUpPage(portal);
  const page = await b.postBytes('/portal/signup', form(b, Buffer.from('ada@b.co')), { 'content-encoding': 'gzip' });
  t.is(page.status, 415);
});

test('a CSRF field as long as its cookie in characters but longer in bytes is refused 403, not 500', async (t) => {
  const b = await signUpPage(portal);
  const forged = `é${b.csrf.slice(1)}`;
  const page = await b.post('/portal/signup', { _csrf: forged, email: 'ada@b.co', name: 'Ada', password: PASSWORD });
  t.is(page.status, 403);
  t.regex(page.text, /Form refused/);
});

test('a method the portal does not serve (PROPFIND, PURGE) is 405 with Allow, not 501', async (t) => {
  for (const method of ['PROPFIND', 'PURGE', 'DELETE']) {
    const response = await fetch(`${portal.url}/portal/signup`, { method });
    t.is(response.status, 405, method);
    t.regex(response.headers.get('allow') ?? '', /\bPOST\b/, method);
  }
});

test('a form over 16 KiB is refused 413 in the portal\'s words, not the library\'s', async (t) => {
  const b = await signUpPage(portal);
  const page = await b.post('/portal/signup', { email: 'ada@b.co', name: 'x'.repeat(17 * 1024), password: PASSWORD });
  t.is(page.status, 413);
  t.regex(page.text, /The form is larger than 16 KiB, more than any of the portal&#39;s forms holds/);
  t.notRegex(page.text, /request entity too large/);
});

test('a form refused for want of its cookies over plain HTTP away from loopback says the portal needs HTTPS', async (t) => {
  // the gateway's X-Forwarded-Proto and -Host: a browser on http://portal.example dropped the Secure cookies
  const post = (proto: string, host: string) =>
    fetch(`${portal.url}/portal/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': proto, 'x-forwarded-host': host, 'x-forwarded-for': '198.51.100.200' },
      body: '_csrf=abc&email=a%40b.co&password=x',
    }).then(async (response) => ({ status: response.status, text: await response.text() }));
  const plain = await post('http', 'portal.example');
  t.is(plain.status, 403);
  t.regex(plain.text, /The portal needs HTTPS \(or localhost\).*Open https:\/\/portal\.example\/portal\/ instead/);
  for (const [proto, host] of [['https', 'portal.example'], ['http', 'localhost'], ['http', '127.0.0.1'], ['http', '[::1]']]) {
    const page = await post(proto!, host!);
    t.is(page.status, 403, `${proto}://${host}`);
    t.regex(page.text, /This form has expired or did not come from this portal/, `${proto}://${host}`);
  }
});
