// The portal's API reference over HTTP (issue 32): the page under the portal's CSP, the description
// with `servers` set to the API base URL, Swagger UI's files served by the portal with long-lived
// cache headers. No gateway is needed: the reference reads nothing from the Admin API.
import { gunzipSync } from 'node:zlib';
import { request } from 'node:http';
import test from 'ava';
import { parse } from 'yaml';
import { PortalBrowser, startTestPortal, type TestPortal } from '../helpers/portal.ts';

const API_URL = 'https://api.example.test/v1';
let portal: TestPortal;

test.before(async () => {
  // an Admin API nobody listens on: the reference must not need one
  portal = await startTestPortal({ adminUrl: 'http://127.0.0.1:9', apiUrl: API_URL, signUp: 'open' });
});

test.after.always(() => portal?.dispose());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw GET that keeps the body as bytes (fetch would gunzip it). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    request(new URL(path, portal.url), { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

test('the reference page is served signed out, under a CSP with no inline script, linking only the portal\'s own files', async (t) => {
  const page = await new PortalBrowser(portal.url, '198.51.100.1').get('/portal/reference');
  t.is(page.status, 200);
  const csp = page.headers.get('content-security-policy')!;
  const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
  t.deepEqual(directives['script-src'], ["'self'"], 'scripts from the portal only, nothing inline');
  t.deepEqual(directives['style-src'], ["'self'"]);
  t.deepEqual(directives['connect-src'], ["'self'", 'https://api.example.test'], '"try it" may call the API base URL');
  t.deepEqual(directives['frame-ancestors'], ["'none'"]);
  t.is(page.headers.get('cache-control'), 'no-store');
  t.regex(page.text, /<div id="swagger-ui" data-spec="\/portal\/reference\/openapi\.json" data-scheme="bearerAuth"/);
  t.true(page.text.includes(`<code>${API_URL}</code>`));
  t.notRegex(page.text, /<script(?![^>]*\bsrc="\/portal\/)/, 'every script is a file the portal serves');
  t.notRegex(page.text, /\b(?:src|href)="(?:https?:)?\/\//, 'no asset from another origin');
  t.regex(page.text, /<a href="\/portal\/signup">sign up<\/a>/, 'signed out: told how to get a key');
});

test('the description is gateway/openapi.yaml with servers set to the API base URL, as JSON and YAML', async (t) => {
  const json = await fetch(new URL('/portal/reference/openapi.json', portal.url));
  t.is(json.status, 200);
  t.regex(json.headers.get('content-type')!, /^application\/json/);
  const spec = (await json.json()) as { openapi: string; servers: unknown; paths: Record<string, unknown> };
  t.deepEqual(spec.servers, [{ url: API_URL, description: 'The Animal Store API, through the gateway' }]);
  t.is(spec.openapi, '3.1.0');
  t.truthy(spec.paths['/pets'], 'the API\'s paths');
  t.is(json.headers.get('cache-control'), 'no-cache');
  const etag = json.headers.get('etag')!;
  t.regex(etag, /^"[\w-]+"$/);
  // (not through fetch: with If-None-Match set by hand it adds Cache-Control: no-cache, which asks for the body)
  const again = await rawGet('/portal/reference/openapi.json', { 'if-none-match': etag });
  t.is(again.status, 304, 'revalidated, not sent again');
  t.is(again.body.length, 0);
  const yaml = await fetch(new URL('/portal/reference/openapi.yaml', portal.url));
  t.is(yaml.status, 200);
  t.deepEqual(parse(await yaml.text()), spec, 'the same document in YAML');
});

test('Swagger UI\'s files are served by the portal under a versioned path, cached for a year, gzipped on request', async (t) => {
  const page = await new PortalBrowser(portal.url, '198.51.100.2').get('/portal/reference');
  const bundlePath = /<script src="(\/portal\/assets\/swagger-ui\/\d+\.\d+\.\d+\/swagger-ui-bundle\.js)"/.exec(page.text)?.[1];
  const cssPath = /<link rel="stylesheet" href="(\/portal\/assets\/swagger-ui\/\d+\.\d+\.\d+\/swagger-ui\.css)"/.exec(page.text)?.[1];
  t.truthy(bundlePath);
  t.truthy(cssPath);

  const plain = await rawGet(bundlePath!);
  t.is(plain.status, 200);
  t.is(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.is(plain.headers['content-encoding'], undefined);
  t.true(plain.body.includes('SwaggerUIBundle'));

  const gzipped = await rawGet(bundlePath!, { 'accept-encoding': 'gzip, br' });
  t.is(gzipped.headers['content-encoding'], 'gzip');
  t.is(gzipped.headers.vary, 'Accept-Encoding');
  t.true(gzipped.body.length < plain.body.length / 2);
  t.deepEqual(gunzipSync(gzipped.body), plain.body);

  const css = await rawGet(cssPath!);
  t.is(css.status, 200);
  t.is(css.headers['content-type'], 'text/css; charset=utf-8');
  t.is(css.headers['cache-control'], 'public, max-age=31536000, immutable');

  const script = await rawGet('/portal/assets/reference.js');
  t.is(script.status, 200);
  t.is(script.headers['cache-control'], 'public, max-age=300');

  t.is((await rawGet(bundlePath!.replace('swagger-ui-bundle.js', 'index.html'))).status, 404, 'only the files the page uses');
  t.is((await rawGet('/portal/assets/swagger-ui/0.0.1/swagger-ui-bundle.js')).status, 404, 'another version: not found');
});
