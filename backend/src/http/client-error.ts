import type { Duplex } from 'node:stream';
import { ErrorCode, type ErrorBody } from './errors.ts';

/**
 * Requests Node's HTTP parser rejects before Koa sees them (control bytes in a header, a bad chunk
 * size, headers over Node's limit, a request that took too long) get the Error shape too, instead
 * of Node's bare status line; the connection is then closed, as Node does.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, body]: [number, string, ErrorBody] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', { code: ErrorCode.requestHeadersTooLarge, message: 'The request headers are too large.', status: 431 }]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', { code: ErrorCode.requestTimeout, message: 'The request took too long to arrive.', status: 408 }]
        : [400, 'Bad Request', { code: ErrorCode.badRequest, message: 'The request is not valid HTTP/1.1.', status: 400 }];
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}
