import type { LuaRequestState } from '../lua/lua-plugin-host.ts';
import type { Consumer, KeyAuthCredential, Route, Service } from '../control-plane/db/entities.ts';
import { defaultErrorMessage, errorContentType, renderError } from '../kong/error-template.ts';
import { firstValue, type HeaderMap } from '../kong/headers.ts';

/** Thrown by kong.response.exit/error: the handler stops; the phase runner turns it into the response. */
export class ExitSignal {
  constructor(readonly response: ExitResponse) {}
}

export interface ExitResponse {
  status: number;
  /** A string is sent as is; an object is JSON-encoded (kong.response.exit semantics). */
  body?: string | object;
  headers?: Record<string, string | string[]>;
}

/** kong.response.get_source(): who produced the response. */
export type ResponseSource = 'service' | 'exit' | 'error';

/** What the PDK and plugins may do with the client's body (kong.request.get_raw_body and friends). */
export interface RequestBody {
  /** Content-Length, when the client sent one. */
  readonly declaredLength: number | undefined;
  readonly chunked: boolean;
  /** Reads the body into memory, stopping as soon as it passes `limit` bytes. */
  read(limit: number): Promise<{ body: Buffer; exceeded: boolean }>;
}

const NO_BODY: RequestBody = {
  declaredLength: undefined,
  chunked: false,
  read: () => Promise.resolve({ body: Buffer.alloc(0), exceeded: false }),
};

export interface RequestContextOptions {
  id: string;
  /** Milliseconds since the epoch, from the gateway's clock. */
  startedAt: number;
  method: string;
  scheme: 'http' | 'https';
  /** The host the client asked for, without port (Host header or absolute-form target). */
  host: string;
  port: number;
  /** The request path as sent (not normalised). */
  path: string;
  query: string;
  headers: HeaderMap;
  clientIp: string;
  body?: RequestBody;
}

/** ngx.ctx's KONG_* timestamps (performance.now() milliseconds). */
export interface RequestTiming {
  readonly start: number;
  upstreamStart?: number;
  /** When the upstream's response headers arrived. */
  upstreamResponse?: number;
}

/** kong.response.get_raw_body's buffer during body_filter (Kong's KONG_BODY_BUFFER). */
interface BodyFilterChunk {
  chunk: Buffer;
  eof: boolean;
  /** Set by kong.response.set_raw_body: replaces this chunk and ends the body. */
  replaced?: Buffer;
}

/** How much of a response kong.response.get_raw_body may hold; beyond it the request is aborted. */
export const RAW_BODY_LIMIT = 16 * 1024 * 1024;

export class RawBodyTooLarge extends Error {}

/**
 * One request as the PDK sees it (ngx.ctx plus the request and response state Kong keeps in
 * nginx variables). Request headers are one mutable map: kong.service.request.set_header changes
 * what kong.request.get_header returns afterwards, as ngx.req.set_header does in Kong.
 * Plugin-private state lives in `pluginContext(name)` (kong.ctx.plugin), never in fields here.
 */
export class RequestContext {
  readonly id: string;
  readonly startedAt: number;
  readonly method: string;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly requestHeaders: HeaderMap;
  readonly clientIp: string;
  readonly timing: RequestTiming;
  /** The client's request body (read only on demand). */
  readonly body: RequestBody;

  route?: Route;
  service?: Service;
  /** The path prefix the router stripped (strip_path), for X-Forwarded-Prefix. */
  strippedPrefix?: string;
  upstreamPath = '/';
  /** Host a plugin set with kong.service.request.set_header/add_header (nginx's $upstream_host): sent as is. */
  upstreamHost?: string;
  upstreamQuery: string;
  consumer?: Consumer;
  credential?: Pick<KeyAuthCredential, 'id' | 'consumer'>;
  private readonly pluginState = new Map<string, Record<string, unknown>>();
  readonly shared: Record<string, unknown> = {};
  /** The Lua plugin host's handle on this request's state in the VM (ngx.ctx lives there). */
  luaState?: LuaRequestState = undefined;

  status = 200;
  readonly responseHeaders: HeaderMap = new Map();
  /** The spelling each response header was set with (the map is keyed by lower case). */
  readonly responseHeaderNames = new Map<string, string>();
  private settledSource?: ResponseSource;
  private bodyChunk?: BodyFilterChunk;
  private bodyBuffer?: Buffer[];
  private bodyBuffered = 0;

  constructor(options: RequestContextOptions, now = performance.now()) {
    this.id = options.id;
    this.startedAt = options.startedAt;
    this.method = options.method;
    this.scheme = options.scheme;
    this.host = options.host;
    this.port = options.port;
    this.path = options.path;
    this.upstreamQuery = options.query;
    this.requestHeaders = options.headers;
    this.clientIp = options.clientIp;
    this.body = options.body ?? NO_BODY;
    this.timing = { start: now };
  }

  /**
   * kong/pdk/response.lua get_source: KONG_UNEXPECTED → "error", KONG_EXITED → "exit",
   * KONG_PROXIED → "service", otherwise "error". One field, with the same precedence.
   */
  get source(): ResponseSource {
    return this.settledSource ?? 'error';
  }

  /** The upstream answered (KONG_PROXIED). */
  markProxied(): void {
    this.settledSource ??= 'service';
  }

  /** A plugin or Kong itself produced the response (KONG_EXITED); never hides an error. */
  markExited(): void {
    if (this.settledSource !== 'error') this.settledSource = 'exit';
  }

  /** Kong.handle_error ran or a handler failed (KONG_UNEXPECTED): wins over everything else. */
  markUnexpected(): void {
    this.settledSource = 'error';
  }

  getHeader(name: string): string | undefined {
    const key = name.toLowerCase();
    // ngx.var.http_* lookups (kong.request.get_header) treat `_` as `-`.
    return firstValue(this.requestHeaders.get(key) ?? this.requestHeaders.get(key.replaceAll('_', '-')));
  }

  setServiceHeader(name: string, value: string): void {
    const key = normalizeName(name);
    if (key === 'host') this.upstreamHost = value;
    this.requestHeaders.set(key, value);
  }

  addServiceHeader(name: string, value: string): void {
    const key = normalizeName(name);
    if (key === 'host') this.upstreamHost = value;
    const existing = this.requestHeaders.get(key);
    this.requestHeaders.set(key, existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value]);
  }

  clearServiceHeader(name: string): void {
    this.requestHeaders.delete(normalizeName(name));
  }

  /** kong.request.get_query(): repeated args become arrays, valueless args `true`. */
  getQuery(): Record<string, string | true | Array<string | true>> {
    const result: Record<string, string | true | Array<string | true>> = {};
    if (!this.upstreamQuery) return result;
    for (const part of this.upstreamQuery.split('&')) {
      if (!part) continue;
      const eq = part.indexOf('=');
      const key = queryKey(part);
      const value: string | true = eq === -1 ? true : decodeQueryComponent(part.slice(eq + 1));
      const existing = result[key];
      if (existing === undefined) result[key] = value;
      else if (Array.isArray(existing)) existing.push(value);
      else result[key] = [existing, value];
    }
    return result;
  }

  clearQueryArg(name: string): void {
    if (!this.upstreamQuery) return;
    const parts = this.upstreamQuery.split('&');
    const kept = parts.filter((part) => queryKey(part) !== name);
    if (kept.length !== parts.length) this.upstreamQuery = kept.join('&');
  }

  /** kong.client.authenticate */
  authenticate(consumer: Consumer | undefined, credential: Pick<KeyAuthCredential, 'id' | 'consumer'> | undefined): void {
    this.consumer = consumer;
    this.credential = credential;
  }

  /** kong.ctx.plugin: one table per plugin and request. */
  pluginContext(name: string): Record<string, unknown> {
    let state = this.pluginState.get(name);
    if (!state) {
      state = {};
      this.pluginState.set(name, state);
    }
    return state;
  }

  setResponseHeader(name: string, value: string | string[]): void {
    const key = normalizeName(name);
    this.responseHeaders.set(key, value);
    this.responseHeaderNames.set(key, name);
  }

  addResponseHeader(name: string, value: string): void {
    const key = normalizeName(name);
    if (!this.responseHeaderNames.has(key)) this.responseHeaderNames.set(key, name);
    const existing = this.responseHeaders.get(key);
    if (existing === undefined) this.responseHeaders.set(key, value);
    else this.responseHeaders.set(key, [...(Array.isArray(existing) ? existing : [existing]), value]);
  }

  clearResponseHeader(name: string): void {
    const key = normalizeName(name);
    this.responseHeaders.delete(key);
    this.responseHeaderNames.delete(key);
  }

  getResponseHeader(name: string): string | undefined {
    return firstValue(this.responseHeaders.get(normalizeName(name)));
  }

  /** kong.response.exit: stops the current handler; the phase runner produces the response. */
  exit(status: number, body?: string | object, headers?: Record<string, string | string[]>): never {
    this.markExited();
    throw new ExitSignal({ status, body, headers });
  }

  /** kong.response.error: an exit whose body is Kong's error template for the client's Accept. */
  error(status: number, message?: string, headers: Record<string, string | string[]> = {}): never {
    this.markExited();
    throw new ExitSignal(this.errorResponse(status, message, headers));
  }

  /** The response kong.response.error would produce; `accept` defaults to the request's Accept. */
  errorResponse(
    status: number,
    message?: string,
    headers: Record<string, string | string[]> = {},
    accept: string | undefined = this.getHeader('accept'),
  ): ExitResponse {
    const explicitType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    const contentType = firstValue(explicitType) ?? errorContentType(accept);
    return {
      status,
      body: renderError(contentType, message ?? defaultErrorMessage(status), this.id),
      headers: { ...headers, 'Content-Type': contentType },
    };
  }

  /** The body_filter phase is about to run its plugins on `chunk`. */
  beginBodyChunk(chunk: Buffer, eof: boolean): void {
    this.bodyChunk = { chunk, eof };
  }

  /** body_filter is running on the response's last chunk (ngx.arg[2]). */
  get inLastBodyChunk(): boolean {
    return this.bodyChunk?.eof ?? false;
  }

  /** What the body_filter plugins left of the chunk, and whether the body ends with it. */
  endBodyChunk(): { chunk: Buffer; eof: boolean } {
    const current = this.bodyChunk!;
    this.bodyChunk = undefined;
    if (current.replaced !== undefined) return { chunk: current.replaced, eof: true };
    return { chunk: current.chunk, eof: current.eof };
  }

  /**
   * kong.response.get_raw_body (kong/pdk/response.lua, 3.9.3): chunks are buffered until eof,
   * then the whole body is returned (and becomes the chunk sent); before eof, undefined and the
   * chunk is held back. The buffer has a bound: beyond RAW_BODY_LIMIT the request fails.
   */
  getRawBody(): Buffer | undefined {
    const current = this.bodyChunk;
    if (!current) throw new Error('kong.response.get_raw_body is only available in body_filter');
    if (current.replaced !== undefined) return current.replaced;
    if (current.eof && !this.bodyBuffer) return current.chunk;
    if (current.chunk.length > 0) {
      this.bodyBuffered += current.chunk.length;
      if (this.bodyBuffered > RAW_BODY_LIMIT) throw new RawBodyTooLarge(`kong.response.get_raw_body: the response body exceeds ${RAW_BODY_LIMIT} bytes`);
      (this.bodyBuffer ??= []).push(current.chunk);
    }
    if (current.eof) {
      const whole = Buffer.concat(this.bodyBuffer ?? []);
      this.bodyBuffer = undefined;
      this.bodyBuffered = 0;
      current.chunk = whole;
      return whole;
    }
    current.chunk = Buffer.alloc(0);
    return undefined;
  }

  /** kong.response.set_raw_body: this chunk becomes `body` and the body ends here. */
  setRawBody(body: string | Buffer): void {
    const current = this.bodyChunk;
    if (!current) throw new Error('kong.response.set_raw_body is only available in body_filter');
    current.replaced = typeof body === 'string' ? Buffer.from(body) : body;
  }
}

/** Header maps are keyed by lower-case name. */
export function normalizeName(name: string): string {
  return name.toLowerCase();
}

/** The decoded name of one `name=value` part of a query string. */
function queryKey(part: string): string {
  const eq = part.indexOf('=');
  return decodeQueryComponent(eq === -1 ? part : part.slice(0, eq));
}

function decodeQueryComponent(text: string): string {
  // Nothing escaped: the text is its own decoding.
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}
