import { existsSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompiledSnapshot } from './snapshot.ts';

/**
 * The control plane's side of snapshot delivery (gateway/local/README.md): data-plane nodes
 * long-poll `GET /v1/snapshot`, as Kong's data planes connect to `cluster_listen`. The listener
 * answers a poll at once when the node runs another configuration, else holds it until one is
 * published or `wait` runs out (304). It also remembers what each node reported, for the Admin
 * API's `GET /clustering/data-planes` and for writes that wait until every node runs them.
 */

/** What Kong's `GET /clustering/data-planes` lists per node (kong/api/routes/clustering.lua). */
export interface DataPlaneNode {
  id: string;
  hostname: string;
  ip: string;
  config_hash: string;
  /** The node's Kong version, as it reported it (Kong's DP sends node_version); null if it did not. */
  version: string | null;
  /** Kong's DP sends them with cluster_dp_labels, which our nodes do not have: null, as Kong's rows without. */
  labels: Record<string, string> | null;
  /** Unix seconds. */
  last_seen: number;
  /** Unix seconds: the row's last update, every poll (Kong upserts the row on each ping). */
  updated_at: number;
  /** kong/constants.lua CLUSTERING_SYNC_STATUS: "normal" when it runs the current configuration. */
  sync_status: 'normal' | 'unknown';
}

export type ClusterLog = (level: 'info' | 'warn' | 'err', message: string) => void;

/** A node that has not polled for this long is not waited for (a poll is renewed every ≤ 30 s). */
const NODE_LIVE_MS = 35_000;
/**
 * A node whose held poll's connection closed before an answer (a node killed, stopped, or
 * reloading) and that has not polled again within this long is not waited for either: a
 * reloading node's new worker 0 polls again at once. A node between two polls (its last one
 * answered) is waited for as long as it is live.
 */
const POLL_LOST_GRACE_MS = 250;
const MAX_WAIT_S = 30;
const MAX_ERROR_LENGTH = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HASH = /^[0-9a-f]{32}$/;
// typedefs.semantic_version's patterns (kong/db/schema/typedefs.lua:633-645), kept short and printable
const VERSION = /^\d+[.\d]*(-?[\w.+-]*)?$/;

interface PendingPoll {
  response: ServerResponse;
  hash: string;
  failedHash: string;
  timer: NodeJS.Timeout;
}

interface NodeState extends DataPlaneNode {
  /** When it last polled, by the liveness clock. */
  seenAtMs: number;
  /** The last configuration it could not load, reported once in the log. */
  failedHash: string;
  /** When its held poll's connection closed unanswered, by the liveness clock; unset once it polls again. */
  lostAtMs?: number;
}

/** `unix:/path/cluster.sock` or `host:port` (Kong's cluster_listen format, without options). */
export type ClusterAddress = { path: string } | { host: string; port: number };

export class ClusterListener {
  private current: CompiledSnapshot;
  private readonly pending = new Set<PendingPoll>();
  private readonly nodes = new Map<string, NodeState>();
  private readonly convergence = new Set<() => void>();
  private readonly server: Server;

  /**
   * `now` dates what the nodes report (last_seen: a test's clock, say); whether a node is alive is
   * real time elapsed, `elapsed` (ms, monotonic): a test clock set an hour ahead must not make
   * every node look gone, and every Admin API write answer before the nodes run it.
   */
  constructor(
    initial: CompiledSnapshot,
    private readonly log: ClusterLog,
    private readonly now: () => number = Date.now,
    private readonly elapsed: () => number = () => performance.now(),
  ) {
    this.current = initial;
    this.server = createServer((request, response) => this.handle(request, response));
  }

  get snapshot(): CompiledSnapshot {
    return this.current;
  }

  /** Listens; answers the address data planes use (`unix:/path` or `host:port`). */
  listen(address: ClusterAddress): Promise<string> {
    if ('path' in address && existsSync(address.path)) unlinkSync(address.path); // a stale socket of a stopped run
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      const done = () => {
        this.server.off('error', reject);
        const bound = this.server.address();
        resolve(typeof bound === 'string' ? `unix:${bound}` : `${(bound as AddressInfo).address}:${(bound as AddressInfo).port}`);
      };
      if ('path' in address) this.server.listen(address.path, done);
      else this.server.listen(address.port, address.host, done);
    });
  }

  /** Makes `snapshot` the configuration every node should run, and answers the polls waiting for it. */
  publish(snapshot: CompiledSnapshot): void {
    this.current = snapshot;
    for (const poll of this.pending) {
      if (this.wants(poll.hash, poll.failedHash)) this.send(poll);
    }
    this.checkConvergence();
  }

  /**
   * Resolves once every live node reports the current configuration (or reported that it could
   * not load it), or after `timeoutMs`: an Admin API write answers when it runs everywhere.
   */
  settled(timeoutMs: number): Promise<void> {
    if (this.converged()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.convergence.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        const behind = this.behind().map(([id, node]) => `${node.hostname || '-'} (${id}) at ${node.config_hash.slice(0, 12) || 'none'}`);
        this.log('warn', `an Admin API write answered before every data plane ran it (${timeoutMs} ms); behind: ${behind.join(', ')}`);
        done();
      }, timeoutMs);
      this.convergence.add(done);
    });
  }

  /** The nodes seen, as Kong's `GET /clustering/data-planes` lists them. */
  dataPlanes(): DataPlaneNode[] {
    return [...this.nodes.values()].map(({ seenAtMs: _, failedHash: __, lostAtMs: ___, ...node }) => ({
      ...node,
      sync_status: node.config_hash === this.current.hash ? 'normal' : 'unknown',
    }));
  }

  async close(): Promise<void> {
    for (const poll of this.pending) {
      clearTimeout(poll.timer);
      poll.response.destroy();
    }
    this.pending.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
  }

  private wants(hash: string, failedHash: string): boolean {
    return hash !== this.current.hash && failedHash !== this.current.hash;
  }

  /** The live nodes that run neither the current configuration nor reported failing it, by id. */
  private behind() {
    const now = this.elapsed();
    const lost = (node: NodeState) => node.lostAtMs !== undefined && now - node.lostAtMs >= POLL_LOST_GRACE_MS;
    const live = (node: NodeState) => node.seenAtMs >= now - NODE_LIVE_MS && !lost(node);
    return [...this.nodes.entries()].filter(
      ([, node]) => live(node) && node.config_hash !== this.current.hash && node.failedHash !== this.current.hash,
    );
  }

  private converged(): boolean {
    return this.behind().length === 0;
  }

  private checkConvergence(): void {
    if (this.convergence.size > 0 && this.converged()) for (const done of [...this.convergence]) done();
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://cluster');
    if (url.pathname !== '/v1/snapshot') return answer(response, 404, { message: 'Not found' });
    if (request.method !== 'GET') return answer(response, 405, { message: 'Method not allowed' });
    const query = url.searchParams;
    const id = query.get('node_id') ?? '';
    const hash = query.get('hash') ?? '';
    const failedHash = query.get('failed_hash') ?? '';
    const wait = Number(query.get('wait') ?? MAX_WAIT_S);
    const version = query.get('node_version');
    if (!UUID.test(id)) return answer(response, 400, { message: 'node_id: expected a UUID' });
    if (hash !== '' && !HASH.test(hash)) return answer(response, 400, { message: 'hash: expected an MD5 in hex' });
    if (failedHash !== '' && !HASH.test(failedHash)) return answer(response, 400, { message: 'failed_hash: expected an MD5 in hex' });
    if (!Number.isFinite(wait) || wait < 0) return answer(response, 400, { message: 'wait: expected seconds, 0 or more' });
    if (version !== null && !(version.length <= 64 && VERSION.test(version))) {
      return answer(response, 400, { message: 'node_version: expected a version, X.Y.Z' });
    }

    const node = this.record(id, query.get('hostname') ?? '', request.socket.remoteAddress ?? 'unix', hash, version, failedHash, query.get('error'));
    const poll: PendingPoll = { response, hash, failedHash, timer: undefined as unknown as NodeJS.Timeout };
    if (this.wants(hash, failedHash)) return this.send(poll);
    poll.timer = setTimeout(() => {
      this.pending.delete(poll);
      response.writeHead(304).end();
    }, Math.min(wait, MAX_WAIT_S) * 1000);
    this.pending.add(poll);
    response.on('close', () => {
      clearTimeout(poll.timer);
      this.pending.delete(poll);
      // unanswered, and the node has not polled since: it is gone, or about to poll again
      if (!response.writableFinished && this.nodes.get(id) === node) {
        node.lostAtMs = this.elapsed();
        setTimeout(() => this.checkConvergence(), POLL_LOST_GRACE_MS + 10).unref();
      }
    });
  }

  private send(poll: PendingPoll): void {
    clearTimeout(poll.timer);
    this.pending.delete(poll);
    const body = this.current.json;
    poll.response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    poll.response.end(body);
  }

  private record(
    id: string,
    hostname: string,
    ip: string,
    hash: string,
    version: string | null,
    failedHash: string,
    error: string | null,
  ): NodeState {
    const previous = this.nodes.get(id);
    const seconds = Math.floor(this.now() / 1000);
    const node: NodeState = {
      id,
      hostname: hostname.slice(0, 255),
      ip,
      config_hash: hash,
      version,
      labels: null,
      last_seen: seconds,
      updated_at: seconds,
      sync_status: 'unknown',
      seenAtMs: this.elapsed(),
      failedHash: previous?.failedHash ?? '',
    };
    if (!previous) this.log('info', `data plane ${node.hostname || '-'} (${id}) connected`);
    if (failedHash !== '' && failedHash !== node.failedHash) {
      const why = printable(error ?? 'no reason given').slice(0, MAX_ERROR_LENGTH);
      this.log('err', `data plane ${node.hostname || '-'} (${id}) could not load configuration ${failedHash.slice(0, 12)}: ${why}`);
    }
    node.failedHash = failedHash || node.failedHash;
    this.nodes.set(id, node);
    this.checkConvergence();
    return node;
  }
}

/** A node's error message goes into the log as one line. */
function printable(text: string): string {
  return [...text].map((c) => (c < ' ' || c === '\x7f' ? ' ' : c)).join('');
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
