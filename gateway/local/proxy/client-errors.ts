import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { defaultErrorMessage, errorContentType, renderError } from '../kong/error-template.ts';
import { KongHeaders } from '../kong/headers.ts';
import { KONG_ERROR_PAGES, LARGE_CLIENT_HEADER_BUFFER_SIZE, nginxSpecialPage } from '../kong/nginx-defaults.ts';
import { SERVER_TOKENS } from '../control-plane/kong-version.ts';
import type { Logger } from '../runtime/gateway-runtime.ts';
import { ClientBodyError, type ClientBody } from './client-body.ts';

export const newRequestId = (): string => randomUUID().replaceAll('-', '');

/**
 * The response nginx gives a request it rejects before Kong's phases: Kong's error template
 * (Kong.handle_error via error_page, kong/error_handlers.lua: 494 goes out as 400) for the
 * statuses nginx_kong.lua routes there, nginx's own page otherwise. No plugin runs.
 */
export function earlyResponse(
  status: number,
  accept: string | undefined,
  requestId: string,
): { status: number; contentType: string; body: string } {
  if (KONG_ERROR_PAGES.has(status)) {
    const contentType = errorContentType(accept);
    return { status: status === 494 ? 400 : status, contentType, body: renderError(contentType, defaultErrorMessage(status), requestId) };
  }
  return { status, contentType: 'text/html', body: nginxSpecialPage(status) ?? '' };
}

/** Writes an early rejection through Node's response object and closes the connection after it. */
export function sendEarlyResponse(res: ServerResponse, status: number, accept: string | undefined): void {
  const requestId = newRequestId();
  const response = earlyResponse(status, accept, requestId);
  res.shouldKeepAlive = false;
  res.writeHead(response.status, {
    'Content-Type': response.contentType,
    'Content-Length': Buffer.byteLength(response.body),
    [KongHeaders.server]: SERVER_TOKENS,
    [KongHeaders.responseLatency]: '0',
    [KongHeaders.requestId]: requestId,
  });
  res.end(response.body);
}

function rawResponse(status: number): string {
  const requestId = newRequestId();
  const response = earlyResponse(status, undefined, requestId);
  return (
    `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n` +
    `Date: ${new Date().toUTCString()}\r\n` +
    `Content-Type: ${response.contentType}\r\n` +
    `Content-Length: ${Buffer.byteLength(response.body)}\r\n` +
    'Connection: close\r\n' +
    `${KongHeaders.server}: ${SERVER_TOKENS}\r\n` +
    `${KongHeaders.responseLatency}: 0\r\n` +
    `${KongHeaders.requestId}: ${requestId}\r\n\r\n` +
    response.body
  );
}

/** The status nginx answers for what Node's parser (llhttp) rejected. */
export function statusForParseError(error: Error & { code?: string; rawPacket?: Buffer }): number {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // A request line that does not fit one large buffer is 414; anything else 494.
      const head = error.rawPacket?.subarray(0, LARGE_CLIENT_HEADER_BUFFER_SIZE + 2).toString('latin1') ?? '';
      return /^[A-Za-z-]+ /.test(head) && !head.includes('\r\n') && !head.includes('\n') ? 414 : 494;
    }
    case 'HPE_INVALID_VERSION': {
      const line = error.rawPacket?.toString('latin1', 0, 256) ?? '';
      return /^\S+ \S+ HTTP\/[2-9]\.\d/.test(line) ? 505 : 400;
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

interface SocketState {
  /** Responses started on this connection and not finished. */
  open: number;
  /** The latest request, whose body the parser may have been reading when it failed. */
  latest?: { req: IncomingMessage; body: ClientBody };
  /** A parse error whose answer waits for earlier pipelined responses. */
  pendingStatus?: number;
  failed: boolean;
}

/**
 * Makes every connection get an answer, in order: the parser errors nginx would answer with 400
 * (or 408/414/494/505) get one with Kong's error template, written after the responses of the
 * good requests pipelined before them, and the connection closes. CONNECT gets nginx's 405.
 */
export class ConnectionGuard {
  private readonly sockets = new WeakMap<Duplex, SocketState>();

  constructor(private readonly log: Logger) {}

  private state(socket: Duplex): SocketState {
    let state = this.sockets.get(socket);
    if (!state) {
      state = { open: 0, failed: false };
      this.sockets.set(socket, state);
    }
    return state;
  }

  /** Call for every request before it is handled. */
  track(req: IncomingMessage, res: ServerResponse, body: ClientBody): void {
    const socket = req.socket;
    const state = this.state(socket);
    state.open += 1;
    state.latest = { req, body };
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      state.open -= 1;
      if (state.open === 0 && state.pendingStatus !== undefined) this.writeAndClose(socket, state.pendingStatus);
      else if (state.failed && state.open === 0) socket.end();
    };
    res.once('finish', finished);
    res.once('close', finished);
  }

  attach(server: Server): void {
    server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => this.onClientError(error, socket));
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
      // ngx_http_process_request_header: "client sent CONNECT method" → 405.
      socket.on('error', () => undefined);
      socket.end(rawResponse(405));
    });
  }

  private onClientError(error: Error & { code?: string }, socket: Duplex): void {
    socket.on('error', () => undefined);
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable) {
      this.log('info', `client closed the connection (${error.code ?? error.message})`);
      socket.destroy();
      return;
    }
    const state = this.state(socket);
    if (state.failed) return;
    state.failed = true;
    const status = statusForParseError(error);
    if (error.code === 'HPE_INVALID_EOF_STATE') this.log('info', 'client closed the connection before its request was complete');
    else this.log('info', `client sent an invalid request (${error.code ?? error.message}): ${status}`);
    const latest = state.latest;
    if (latest && !latest.req.complete && state.open > 0) {
      // The parser failed inside this request's body: that request answers the 400 itself.
      latest.body.fail(new ClientBodyError(error.message, status === 408 ? 408 : 400));
      return;
    }
    if (state.open > 0) state.pendingStatus = status;
    else this.writeAndClose(socket, status);
  }

  private writeAndClose(socket: Duplex, status: number): void {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawResponse(status));
  }
}
