import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** As sent: `HTTP/1.1 400 Bad Request`. */
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  /** Interim responses (100 Continue) seen before this one. */
  interim: number[];
}

/**
 * A raw TCP client for what fetch cannot send: malformed requests, pipelining, partial bodies.
 * Responses are parsed as they arrive (Content-Length, chunked, or delimited by the close).
 */
export class RawConnection {
  readonly socket: Socket;
  private buffer = Buffer.alloc(0);
  private closedFlag = false;
  private waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closedFlag = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.write(data)) resolve();
      else this.socket.once('drain', resolve);
    });
  }

  /** Resolves once the server has closed the connection. */
  async waitClosed(): Promise<void> {
    while (!this.closedFlag) await this.changed();
  }

  /** The next response, interim (1xx) ones included; throws if the connection closes first. */
  async next(): Promise<Omit<RawResponse, 'interim'>> {
    for (;;) {
      const parsed = parseResponse(this.buffer, this.closedFlag);
      if (parsed) {
        this.buffer = this.buffer.subarray(parsed.consumed);
        return parsed.response;
      }
      if (this.closedFlag) throw new Error(`connection closed before a complete response; received: ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`);
      await this.changed();
    }
  }

  /** The next final response, with the interim ones seen before it. */
  async response(): Promise<RawResponse> {
    const interim: number[] = [];
    for (;;) {
      const response = await this.next();
      if (response.status >= 200) return { ...response, interim };
      interim.push(response.status);
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

function parseResponse(buffer: Buffer, closed: boolean): { response: Omit<RawResponse, 'interim'>; consumed: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = lines[0]!;
  const status = Number(statusLine.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let offset = end + 4;
  if (status < 200 || status === 204 || status === 304) return { response: { status, statusLine, headers, body: '' }, consumed: offset };
  if (headers['transfer-encoding']?.includes('chunked')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', offset);
      if (lineEnd === -1) return undefined;
      const size = parseInt(buffer.subarray(offset, lineEnd).toString('latin1'), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
      if (size === 0) return { response: { status, statusLine, headers, body: Buffer.concat(parts).toString('utf8') }, consumed: offset };
    }
  }
  // Neither length nor chunks (nginx answers a request it could not parse as HTTP/1.0 would):
  // the body ends with the connection.
  if (headers['content-length'] === undefined && headers.connection === 'close') {
    return closed ? { response: { status, statusLine, headers, body: buffer.subarray(offset).toString('utf8') }, consumed: buffer.length } : undefined;
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buffer.length < offset + length) return undefined;
  return { response: { status, statusLine, headers, body: buffer.subarray(offset, offset + length).toString('utf8') }, consumed: offset + length };
}

/** Sends `request` on a fresh connection and returns the first response. */
export async function rawRequest(url: string, request: string | Buffer): Promise<RawResponse & { closedAfter: Promise<void> }> {
  const connection = await RawConnection.open(url);
  await connection.write(request);
  try {
    const response = await connection.response();
    return { ...response, closedAfter: connection.waitClosed() };
  } catch (error) {
    connection.close();
    throw error;
  }
}
