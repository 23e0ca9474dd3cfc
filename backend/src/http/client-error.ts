import type { Duplex } from 'node:stream';
import { ErrorCode, type ErrorBody } from './errors.ts';
import { describePath } from './error-middleware.ts';
import { calledPath, type ForwardedRequest } from './public-path.ts';

/** What the application serves at a path, for a request Node's parser refused. */
export interface RoutesAt {
  /** The methods its routes serve (none: no route there), in the order Allow lists them. */
  methods: string[];
  /** The headers every response there carries. */
  headers: Record<string, string>;
}

/** What Node's parser says of a request it refused. */
type ParseError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown };

interface ClientErrorAnswer {
  status: number;
  reason: string;
  body: ErrorBody;
  headers?: Record<string, string>;
}

// A request line with a method Node's parser does not know: RFC 9110 lets any token be a method.
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}) (\/[^\s?]*)(?:\?\S*)? HTTP\/1\.[01]\r?\n/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;

/**
 * The request as far as it arrived, for calledPath: its path and the header lines after its
 * request line (Node never parsed them), repeated ones joined as Node joins them.
 */
function rawRequest(path: string, afterLine: string): ForwardedRequest {
  const headers = new Map<string, string>();
  for (const line of afterLine.split(/\r?\n/)) {
    if (line === '') break;
    const header = HEADER_LINE.exec(line);
    if (!header) continue;
    const name = header[1]!.toLowerCase();
    const previous = headers.get(name);
    headers.set(name, previous === undefined ? header[2]! : `${previous}, ${header[2]!}`);
  }
  return { path, get: (name) => headers.get(name.toLowerCase()) ?? '' };
}

/**
 * A method Node's parser refuses (it knows a fixed list; FOO and BREW are valid HTTP methods) is
 * answered as the router answers a method a path does not serve: 405 with Allow where a route
 * is, 404 where none is. Undefined when the request line is not HTTP at all.
 */
function unknownMethod(rawPacket: unknown, bytesParsed: unknown, routesAt: (path: string) => RoutesAt): ClientErrorAnswer | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  // The packet may start with requests answered before this one (pipelined): this request's line
  // starts after the last line break before the byte the parser stopped at.
  const text = rawPacket.toString('latin1');
  const stoppedAt = typeof bytesParsed === 'number' ? bytesParsed : 0;
  const request = text.slice(text.lastIndexOf('\n', stoppedAt - 1) + 1);
  const line = REQUEST_LINE.exec(request);
  if (!line) return undefined;
  const [, method, path] = line as unknown as [string, string, string];
  const { methods, headers } = routesAt(path);
  const called = describePath(calledPath(rawRequest(path, request.slice(line[0].length))));
  if (methods.length === 0) {
    return { status: 404, reason: 'Not Found', body: { code: ErrorCode.notFound, message: `No resource at ${method} ${called}.`, status: 404 }, headers };
  }
  return {
    status: 405,
    reason: 'Method Not Allowed',
    body: { code: ErrorCode.methodNotAllowed, message: `Method ${method} is not allowed on ${called}.`, status: 405 },
    headers: { ...headers, Allow: methods.join(', ') },
  };
}

function answerFor(error: ParseError, routesAt: (path: string) => RoutesAt): ClientErrorAnswer {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', body: { code: ErrorCode.requestHeadersTooLarge, message: 'The request headers are too large.', status: 431 } };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', body: { code: ErrorCode.requestTimeout, message: 'The request took too long to arrive.', status: 408 } };
  }
  const answer = error.code === 'HPE_INVALID_METHOD' ? unknownMethod(error.rawPacket, error.bytesParsed, routesAt) : undefined;
  return answer ?? { status: 400, reason: 'Bad Request', body: { code: ErrorCode.badRequest, message: 'The request is malformed: a header field or the body framing is not valid HTTP.', status: 400 } };
}

/**
 * Requests Node's HTTP parser rejects before Koa sees them (control bytes in a header, a bad chunk
 * size, headers over Node's limit, a request that took too long, a method it does not know) get
 * the Error shape too, instead of Node's bare status line; the connection is then closed, as Node
 * does.
 */
export function answerClientError(
  error: ParseError,
  socket: Duplex,
  routesAt: (path: string) => RoutesAt,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, reason, body, headers = {} } = answerFor(error, routesAt);
  const json = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n${extra}Connection: close\r\n\r\n${json}`,
  );
}
