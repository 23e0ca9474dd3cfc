import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { LARGE_CLIENT_HEADER_BUFFER_SIZE, MAX_HEADER_SIZE } from '../../../gateway/local/kong/nginx-defaults.ts';
import { earlyResponse, statusForParseError } from '../../../gateway/local/proxy/client-errors.ts';
import { readRequestHead } from '../../../gateway/local/proxy/request-head.ts';

// nginx's defaults as Kong 3.9.3 leaves them: kong/templates/nginx_kong.lua sets no
// large_client_header_buffers, so nginx's `4 8k` apply; error_page sends 400 404 405 408 411 412
// 413 414 417 494 500 502 503 504 to Kong.handle_error (kong/error_handlers.lua: 494 → 400).

function head(method: string, url: string, headers: Record<string, string> = { host: 'x' }, httpVersion = '1.1'): IncomingMessage {
  return { method, url, httpVersion, headers, rawHeaders: Object.entries(headers).flat() } as unknown as IncomingMessage;
}

test('the limits are nginx\'s defaults', (t) => {
  t.is(LARGE_CLIENT_HEADER_BUFFER_SIZE, 8192);
  t.is(MAX_HEADER_SIZE, 4 * 8192);
});

test('a request line over one 8k buffer: 414; just under: accepted', (t) => {
  t.like(readRequestHead(head('GET', `/${'a'.repeat(8200)}`)), { status: 414 });
  t.like(readRequestHead(head('GET', `/${'a'.repeat(8100)}`)), { path: `/${'a'.repeat(8100)}` });
});

test('a header line over one 8k buffer: 494 (sent as 400); just under: accepted', (t) => {
  t.like(readRequestHead(head('GET', '/', { host: 'x', 'x-big': 'b'.repeat(8200) })), { status: 494 });
  t.like(readRequestHead(head('GET', '/', { host: 'x', 'x-big': 'b'.repeat(8100) })), { path: '/' });
});

test('TRACE: 405; HTTP/1.1 without Host: 400; HTTP/1.0 without Host: accepted', (t) => {
  t.like(readRequestHead(head('TRACE', '/')), { status: 405 });
  t.like(readRequestHead(head('GET', '/', {})), { status: 400 });
  t.like(readRequestHead(head('GET', '/', {}, '1.0')), { path: '/', host: '' });
});

test('targets: origin-form, absolute-form (its host wins), and anything else 400', (t) => {
  t.deepEqual(readRequestHead(head('GET', '/v1/pets?limit=1', { host: 'h:8000' })), { host: 'h', hostHeader: 'h:8000', path: '/v1/pets', query: 'limit=1' });
  t.like(readRequestHead(head('GET', 'http://api.example:80/v1/pets?x=1')), { host: 'api.example', path: '/v1/pets', query: 'x=1' });
  t.like(readRequestHead(head('GET', 'http://api.example')), { host: 'api.example', path: '/' });
  t.like(readRequestHead(head('OPTIONS', '*')), { status: 400 });
  t.like(readRequestHead(head('GET', 'ftp://x/')), { status: 400 });
});

test('parser errors map to nginx\'s statuses', (t) => {
  const error = (code: string, raw = '') => Object.assign(new Error(code), { code, rawPacket: Buffer.from(raw) });
  t.is(statusForParseError(error('HPE_INVALID_HEADER_TOKEN')), 400);
  t.is(statusForParseError(error('HPE_HEADER_OVERFLOW', `GET /${'a'.repeat(9000)}`)), 414);
  t.is(statusForParseError(error('HPE_HEADER_OVERFLOW', `GET / HTTP/1.1\r\nX: ${'a'.repeat(9000)}`)), 494);
  t.is(statusForParseError(error('HPE_INVALID_VERSION', 'GET / HTTP/2.0\r\n')), 505);
  t.is(statusForParseError(error('HPE_HEADERS_TIMEOUT')), 408);
});

test('early responses: Kong\'s template for error_page statuses, nginx\'s page otherwise', (t) => {
  const tooLarge = earlyResponse(494, undefined, 'id');
  t.is(tooLarge.status, 400);
  t.deepEqual(JSON.parse(tooLarge.body), { message: 'Request header or cookie too large', request_id: 'id' });
  t.is(earlyResponse(414, 'text/plain', 'id').body, 'URI too long\nrequest_id: id\n');
  const version = earlyResponse(505, undefined, 'id');
  t.is(version.contentType, 'text/html');
  t.regex(version.body, /505 HTTP Version Not Supported/);
});
