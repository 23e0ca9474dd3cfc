import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Header names and values in the order they arrived (repeated headers kept). */
  rawHeaders: string[];
  body: string;
}

export interface Upstream {
  url: string;
  port: number;
  /** Every request received, oldest first. */
  seen: SeenRequest[];
  last(): SeenRequest | undefined;
  close(): Promise<void>;
}

export type Reply = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

/**
 * An HTTP upstream on an ephemeral loopback port that records what reaches it and answers
 * 200 `{"echo":true}` as JSON, or what `reply` writes.
 */
export async function startUpstream(reply?: Reply): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(request);
      if (reply) {
        void Promise.resolve(reply(request, res)).catch(() => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"echo":true}');
    });
  });
  // longer than the data plane's idle upstream keep-alive (60 s, Kong's upstream_keepalive_idle_timeout),
  // as the backend's: else nginx may reuse a connection node is closing (a reset, an [error] line)
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    last: () => seen.at(-1),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A reply describing the request as JSON ({ method, url, headers, body }): safe to read under concurrency. */
export const echoRequest: Reply = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'echo' });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: req.body }));
};

export interface ResettingUpstream extends Upstream {
  /** The next request's connection is reset instead of answered: once per call. */
  resetNext(): void;
  /** How many connections it has reset. */
  readonly resets: number;
}

/**
 * A stand-in for a node behind a balancer that answers as `reply` (default echoRequest), and
 * resets the connection of one request when told: what a balancer meets when a node closes a
 * kept-alive connection under it (a graceful reload, a worker killed).
 */
export async function startResettingUpstream(reply: Reply = echoRequest): Promise<ResettingUpstream> {
  let armed = 0;
  let resets = 0;
  const upstream = await startUpstream((req, res) => {
    if (armed > 0) {
      armed -= 1;
      resets += 1;
      res.socket?.resetAndDestroy();
      return;
    }
    return reply(req, res);
  });
  return {
    ...upstream,
    resetNext: () => void (armed += 1),
    get resets() {
      return resets;
    },
  };
}
