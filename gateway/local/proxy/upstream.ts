import { Pool, errors } from 'undici';
import type { Service } from '../control-plane/db/entities.ts';
import { StreamedBody } from './upstream-request.ts';

/** Why an upstream call failed, and the status Kong answers with for it. */
export class UpstreamError extends Error {
  constructor(
    readonly status: 502 | 503 | 504,
    message: string,
    /** Nothing reached the upstream: safe to retry whatever the method. */
    readonly beforeSend: boolean,
    /** Kong's message for the client, when not the error handler's default for the status. */
    readonly clientMessage?: string,
  ) {
    super(message);
  }
}

export interface UpstreamRequest {
  service: Service;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  /** A buffered body, or the client's, streamed as it arrives. */
  body?: Buffer | StreamedBody;
  /** Aborts the request (the client went away): an AbortSignal or an EventEmitter with `aborted`. */
  signal?: AbortSignal | (NodeJS.EventEmitter & { aborted: boolean });
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: NodeJS.ReadableStream;
}

/**
 * Keep-alive connection pools to services (undici, Node's own HTTP client), one per service
 * address and timeouts, with Kong's per-service timeouts: connect_timeout to establish a
 * connection, read_timeout for the response to start and between reads.
 */
export class UpstreamPool {
  private readonly pools = new Map<string, Pool>();

  private poolFor(service: Service): Pool {
    const key = `${service.protocol}://${service.host}:${service.port}|${service.connect_timeout}|${service.read_timeout}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(`${service.protocol}://${service.host.includes(':') ? `[${service.host}]` : service.host}:${service.port}`, {
        connections: 512,
        connectTimeout: service.connect_timeout,
        headersTimeout: service.read_timeout,
        bodyTimeout: service.read_timeout,
        keepAliveTimeout: 60_000,
        keepAliveMaxTimeout: 60_000,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { service } = request;
    try {
      const response = await this.poolFor(service).request({
        method: request.method as 'GET',
        path: request.path,
        headers: request.headers,
        body: request.body instanceof StreamedBody ? request.body.open() : request.body,
        signal: request.signal,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body as unknown as UpstreamResponse['body'] };
    } catch (error) {
      throw toUpstreamError(error as Error & { code?: string }, service);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.destroy()));
    this.pools.clear();
  }
}

function toUpstreamError(error: Error & { code?: string }, service: Service): UpstreamError {
  const where = `${service.host}:${service.port}`;
  if (error instanceof errors.ConnectTimeoutError) return new UpstreamError(504, `connect to ${where} timed out`, true);
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError) {
    return new UpstreamError(504, `${where} timed out`, false);
  }
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
    return new UpstreamError(503, `name resolution failed for ${service.host}`, true, 'name resolution failed');
  }
  const beforeSend = error.code === 'ECONNREFUSED' || error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH';
  return new UpstreamError(502, `${error.code ?? error.message} from ${where}`, beforeSend);
}

/** Retries as nginx's proxy_next_upstream (error timeout) does: tries = retries + 1. */
export async function sendWithRetries(pool: UpstreamPool, request: UpstreamRequest): Promise<UpstreamResponse> {
  const idempotent = !['POST', 'LOCK', 'PATCH'].includes(request.method);
  for (let attempt = 0; ; attempt++) {
    try {
      return await pool.send(request);
    } catch (error) {
      // A streamed body that has started flowing cannot be sent again.
      const replayable = !(request.body instanceof StreamedBody && request.body.started);
      const retryable = error instanceof UpstreamError && error.status !== 503 && replayable && (error.beforeSend || idempotent);
      if (!retryable || attempt >= request.service.retries || request.signal?.aborted) throw error;
    }
  }
}
