import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from './request-context.ts';

const EMPTY = Buffer.alloc(0);

/** The upstream's response body failed half way: nothing more can be sent. */
export class UpstreamReadError extends Error {
  constructor(cause: Error) {
    super(`upstream: ${cause.message} while reading the response`);
  }
}

export type ChunkFilter = (chunk: Buffer, eof: boolean) => Promise<{ chunk: Buffer; eof: boolean }>;

/** One writeHead with a flat [name, value, ...] list: cheaper than a setHeader per header. */
export function writeHead(res: ServerResponse, ctx: RequestContext): void {
  const flat: string[] = [];
  for (const [lower, value] of ctx.responseHeaders) {
    const name = ctx.responseHeaderNames.get(lower) ?? lower;
    if (Array.isArray(value)) for (const v of value) flat.push(name, v);
    else flat.push(name, value);
  }
  res.writeHead(ctx.status, flat);
}

/**
 * Sends `source` through `filter` chunk by chunk as it arrives, as nginx calls body_filter, the
 * last call with eof. A chunk waits one turn of the event loop for the end of the body, so a body
 * that arrives in one piece is one call with eof set. At most a few chunks queue before the
 * source is paused, and writing waits for the client (bounded memory both ways).
 */
export async function streamFiltered(res: ServerResponse, source: NodeJS.ReadableStream, filter: ChunkFilter): Promise<void> {
  const queue: Buffer[] = [];
  let ended = false;
  let failed: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length >= 4) source.pause();
    wake?.();
  };
  const drop = () => {
    source.off('data', onData);
    source.resume();
  };
  source.on('data', onData);
  source.once('end', () => {
    ended = true;
    wake?.();
  });
  source.once('error', (error: Error) => {
    failed = error;
    wake?.();
  });
  for (;;) {
    if (queue.length === 0 && !ended && !failed) await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
    if (failed) throw new UpstreamReadError(failed);
    if (!ended) await new Promise((resolve) => setImmediate(resolve));
    const chunk = queue.length <= 1 ? (queue.shift() ?? EMPTY) : Buffer.concat(queue.splice(0));
    const eof = ended && queue.length === 0;
    if (source.isPaused()) source.resume();
    const filtered = await filter(chunk, eof);
    if (res.destroyed) return drop();
    if (filtered.eof) {
      // The last chunk goes out with the end (one write); if set_raw_body ended the body early,
      // what else the upstream sends is dropped.
      if (!eof) drop();
      res.end(filtered.chunk);
      return;
    }
    if (filtered.chunk.length > 0 && !res.write(filtered.chunk)) await waitForDrain(res);
  }
}

/** Sends `source` unchanged (no body_filter handler): a pipe, closed if the upstream fails. */
export function pipeUnfiltered(res: ServerResponse, source: NodeJS.ReadableStream, onError: (error: UpstreamReadError) => void): void {
  source.once('error', (error: Error) => {
    onError(new UpstreamReadError(error));
    res.destroy();
  });
  source.pipe(res);
}

/** nginx's lingering_time default: how long an unread request body is read and discarded. */
const LINGERING_TIME_MS = 30_000;

/** ngx_http_discard_request_body: the rest of the client's body is read and dropped, for a bounded time. */
export function discardBody(req: IncomingMessage): void {
  const timer = setTimeout(() => req.socket.destroy(), LINGERING_TIME_MS).unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
