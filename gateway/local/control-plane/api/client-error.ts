import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SERVER_TOKENS } from '../kong-version.ts';
import { nginxPage } from './request-filters.ts';

/** What Node's parser says of a request it refused. */
type ParseError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown };

interface Answer {
  status: string;
  headers: Record<string, string>;
  body: string;
}

// nginx takes any method of uppercase letters, '_' and '-' (ngx_http_parse_request_line), in
// origin or absolute form; Node's parser knows a fixed list only.
const REQUEST_LINE = /^([A-Z_-]+) (?:https?:\/\/[^/?\s]*)?([^\s?]*)\S* HTTP\/1\.\d\r?\n/;
const ORIGIN_HEADER = /^origin:[ \t]*(.*?)[ \t]*\r?$/im;

const nginxAnswer = (status: string, body = nginxPage(status)): Answer => ({
  status,
  headers: { Server: 'openresty', 'Content-Type': 'text/html' },
  body,
});

/** ngx_http_special_response.c's 494 page: a header over large_client_header_buffers. */
const HEADER_TOO_LARGE_PAGE =
  '<html>\r\n<head><title>400 Request Header Or Cookie Too Large</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n' +
  '<center>Request Header Or Cookie Too Large</center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n';

/**
 * A method Node's parser refuses is one nginx passes to Kong's Lua: lapis answers it as any method
 * a route does not take (api_helpers.lua handle_error, :548-556): 405 "Method not allowed" on a
 * known path, 404 "Not found" on another, after cors_filter. Undefined when nginx would refuse
 * the request line itself. The packet may start with pipelined requests already parsed.
 */
function unknownMethod(error: ParseError, servesPath: (path: string) => boolean): Answer | undefined {
  if (!Buffer.isBuffer(error.rawPacket)) return undefined;
  const text = error.rawPacket.toString('latin1');
  const stoppedAt = typeof error.bytesParsed === 'number' ? error.bytesParsed : 0;
  // a request pipelined after a body starts where that body ends, with no line break before it:
  // its line is the first one that reads as a request line, from the last line break up to the
  // byte the parser stopped at (within the method)
  let request = '';
  let line: RegExpExecArray | null = null;
  for (let start = text.lastIndexOf('\n', stoppedAt - 1) + 1; start <= stoppedAt && !line; start++) {
    request = text.slice(start);
    line = REQUEST_LINE.exec(request);
  }
  if (!line) return undefined;
  const known = servesPath(line[2] || '/');
  const headerBlock = request.slice(line[0].length).split(/\r?\n\r?\n/, 1)[0]!;
  return {
    status: known ? '405 Method Not Allowed' : '404 Not Found',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Access-Control-Allow-Origin': ORIGIN_HEADER.exec(headerBlock)?.[1] || '*',
      'Access-Control-Allow-Credentials': 'true',
      'X-Kong-Admin-Latency': '0',
      Server: SERVER_TOKENS,
    },
    body: JSON.stringify({ message: known ? 'Method not allowed' : 'Not found' }),
  };
}

function answerFor(error: ParseError, servesPath: (path: string) => boolean): Answer {
  if (error.code === 'HPE_INVALID_METHOD') {
    const answer = unknownMethod(error, servesPath);
    if (answer) return answer;
  }
  // nginx's 494 goes out as 400 Bad Request; only the page names it (ngx_http_special_response.c)
  if (error.code === 'HPE_HEADER_OVERFLOW') return nginxAnswer('400 Bad Request', HEADER_TOO_LARGE_PAGE);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return nginxAnswer('408 Request Time-out');
  return nginxAnswer('400 Bad Request');
}

/**
 * Requests Node's HTTP parser refuses before Koa sees them get what Kong's Admin API answers:
 * a method Node does not know (GEEEET, FOO) the JSON 405 or 404 of Kong's Lua, anything else
 * (a control byte in a header, a bad chunk size, headers too large) nginx's own page, instead of
 * Node's bare status line. The answer follows those of the requests pipelined before it; the
 * connection is then closed, as nginx closes it after such an error.
 */
export function answerClientErrors(server: Server, servesPath: (path: string) => boolean): void {
  const inFlight = new WeakMap<Duplex, Set<ServerResponse>>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    let responses = inFlight.get(request.socket);
    if (!responses) inFlight.set(request.socket, (responses = new Set()));
    const pending = responses;
    pending.add(response);
    response.once('close', () => pending.delete(response));
  });
  server.on('clientError', (error: ParseError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, headers, body } = answerFor(error, servesPath);
    const extra = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    // the requests read whole before the refused one are answered first; one whose body the
    // parser refused is never answered
    const before = [...(inFlight.get(socket) ?? [])]
      .filter((response) => response.req.complete)
      .map((response) => new Promise((resolve) => response.once('close', resolve)));
    void Promise.all(before).then(() => {
      if (!socket.writable) return;
      socket.end(
        `HTTP/1.1 ${status}\r\nDate: ${new Date().toUTCString()}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  });
}
