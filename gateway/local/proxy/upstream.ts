import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Service } from '../store/entities.ts';

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
  body?: Buffer;
}

/**
 * Keep-alive pools to services (nginx `upstream_keepalive_pool_size` 512, 60 s idle), with Kong's
 * per-service timeouts: connect_timeout to establish the connection, write/read_timeout as idle
 * time between writes or reads.
 */
export class UpstreamPool {
  private readonly http = new HttpAgent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: 512, maxFreeSockets: 512, timeout: 60_000 });
  private readonly https = new HttpsAgent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: 512, maxFreeSockets: 512, timeout: 60_000 });

  send(request: UpstreamRequest): Promise<IncomingMessage> {
    const { service } = request;
    return new Promise((resolve, reject) => {
      const send = service.protocol === 'https' ? httpsRequest : httpRequest;
      const req = send({
        agent: service.protocol === 'https' ? this.https : this.http,
        host: service.host,
        port: service.port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        servername: service.protocol === 'https' ? service.host : undefined,
      });
      let sent = false;
      let settled = false;
      const fail = (error: UpstreamError) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        req.destroy();
        reject(error);
      };
      let connectTimer: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        if ((socket as { connecting?: boolean }).connecting) {
          connectTimer = setTimeout(() => fail(new UpstreamError(504, 'upstream connect timed out', true)), service.connect_timeout);
          socket.once('connect', () => clearTimeout(connectTimer));
        }
        socket.setTimeout(Math.max(service.read_timeout, service.write_timeout));
      });
      req.setTimeout(Math.max(service.read_timeout, service.write_timeout), () =>
        fail(new UpstreamError(504, 'upstream timed out', !sent)),
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
          fail(new UpstreamError(503, `name resolution failed for ${service.host}`, true, 'name resolution failed'));
        } else {
          fail(new UpstreamError(502, `${error.code ?? 'error'} from ${service.host}:${service.port}`, !sent || error.code === 'ECONNREFUSED'));
        }
      });
      req.on('response', (response) => {
        if (settled) {
          response.resume();
          return;
        }
        settled = true;
        clearTimeout(connectTimer);
        response.socket.setTimeout(service.read_timeout);
        resolve(response);
      });
      req.on('finish', () => {
        sent = true;
      });
      req.end(request.body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** Retries as nginx's proxy_next_upstream (error timeout) does: tries = retries + 1. */
export async function sendWithRetries(pool: UpstreamPool, request: UpstreamRequest): Promise<IncomingMessage> {
  const idempotent = !['POST', 'LOCK', 'PATCH'].includes(request.method);
  for (let attempt = 0; ; attempt++) {
    try {
      return await pool.send(request);
    } catch (error) {
      const retryable = error instanceof UpstreamError && error.status !== 503 && (error.beforeSend || idempotent);
      if (!retryable || attempt >= request.service.retries) throw error;
    }
  }
}
