import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Poll {
  nodeId: string | null;
  hostname: string | null;
  hash: string;
  wait: number;
  failedHash: string | null;
  error: string | null;
}

export interface FakeControlPlane {
  /** `unix:<path>`, as cluster_control_plane takes it. */
  address: string;
  polls: Poll[];
  /** Serves this document (any JSON text: tests send broken ones too) as the current snapshot. */
  publish(json: string, hash: string): void;
  close(): Promise<void>;
}

/**
 * A control plane's cluster listener as gateway/local/README.md describes it, on a unix socket:
 * GET /v1/snapshot answers 200 with the current snapshot when the node runs another hash (and
 * has not reported that one as failed), else holds the poll until something is published or
 * `holdMs` passes (then 304).
 */
export async function startFakeControlPlane(socketPath: string, { holdMs = 2000 } = {}): Promise<FakeControlPlane> {
  let current: { json: string; hash: string } | undefined;
  const polls: Poll[] = [];
  const waiting = new Set<() => void>();
  const sockets = new Set<Socket>();

  const answer = (poll: Poll, res: ServerResponse): boolean => {
    if (!current || current.hash === poll.hash || current.hash === poll.failedHash) return false;
    const body = Buffer.from(current.json);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
    return true;
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://cp');
    if (url.pathname !== '/v1/snapshot') {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    const q = url.searchParams;
    const poll: Poll = {
      nodeId: q.get('node_id'),
      hostname: q.get('hostname'),
      hash: q.get('hash') ?? '',
      wait: Number(q.get('wait')),
      failedHash: q.get('failed_hash'),
      error: q.get('error'),
    };
    polls.push(poll);
    if (answer(poll, res)) return;
    const done = () => {
      clearTimeout(timer);
      waiting.delete(retry);
    };
    const retry = () => {
      if (answer(poll, res)) done();
    };
    const timer = setTimeout(() => {
      done();
      res.writeHead(304, { 'content-length': 0 });
      res.end();
    }, holdMs);
    waiting.add(retry);
    res.on('close', done);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });

  return {
    address: `unix:${socketPath}`,
    polls,
    publish(json, hash) {
      current = { json, hash };
      for (const retry of [...waiting]) retry();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
