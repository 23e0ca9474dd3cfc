import type { Consumer, KeyAuthCredential, Route, Service } from '../store/entities.ts';
import { defaultErrorMessage, errorContentType, renderError } from '../kong/error-template.ts';
import { firstValue, type HeaderMap } from '../kong/headers.ts';

/** Thrown by kong.response.exit/error during access: the handler stops and Kong delays the response. */
export class ExitSignal {
  constructor(readonly response: ExitResponse) {}
}

export interface ExitResponse {
  status: number;
  /** A string is sent as is; an object is JSON-encoded (kong.response.exit semantics). */
  body?: string | object;
  headers?: Record<string, string | string[]>;
}

export type ResponseSource = 'service' | 'exit' | 'error';

/**
 * One request as the PDK sees it (ngx.ctx plus the request and response state Kong keeps in
 * nginx variables). Request headers are one mutable map: kong.service.request.set_header changes
 * what kong.request.get_header returns afterwards, as ngx.req.set_header does in Kong.
 */
export class RequestContext {
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
  readonly pluginState = new Map<string, Record<string, unknown>>();
  readonly shared: Record<string, unknown> = {};

  status = 200;
  readonly responseHeaders: HeaderMap = new Map();
  /** The spelling each response header was set with (the map is keyed by lower case). */
  readonly responseHeaderNames = new Map<string, string>();
  /** Set by the rate-limiting plugin (kong/pdk/private/rate_limiting.lua). */
  readonly rateLimitHeaders = new Map<string, string>();
  exited = false;
  proxied = false;
  /** Set once a Lua plugin ran: the VM holds kong.ctx state for this request under `slot`. */
  lua?: {
    slot: number;
    /** The VM's per-request state is gone (the final phase call released it). */
    released: boolean;
    /** What the VM was last told kong.client.get_consumer/get_credential answer. */
    consumer?: Consumer;
    credential?: Pick<KeyAuthCredential, 'id' | 'consumer'>;
  };
  /** The last Lua phase call the request will make; it releases the VM's state itself. */
  finalLuaCall?: { plugin: string; phase: string };
  unexpected = false;
  /** Replaces the response body (kong.response.set_raw_body / exit from header_filter). */
  replacementBody?: string;

  constructor(
    readonly id: string,
    readonly startedAt: number,
    readonly method: string,
    readonly scheme: 'http' | 'https',
    readonly host: string,
    readonly port: number,
    readonly path: string,
    rawQuery: string,
    readonly requestHeaders: HeaderMap,
    readonly clientIp: string,
  ) {
    this.upstreamQuery = rawQuery;
  }

  get source(): ResponseSource {
    if (this.unexpected) return 'error';
    if (this.exited) return 'exit';
    if (this.proxied) return 'service';
    return 'error';
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
      const key = decodeQueryComponent(eq === -1 ? part : part.slice(0, eq));
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
    this.upstreamQuery = this.upstreamQuery
      .split('&')
      .filter((part) => {
        const eq = part.indexOf('=');
        return decodeQueryComponent(eq === -1 ? part : part.slice(0, eq)) !== name;
      })
      .join('&');
  }

  /** kong.client.authenticate */
  authenticate(consumer: Consumer | undefined, credential: Pick<KeyAuthCredential, 'id' | 'consumer'> | undefined): void {
    this.consumer = consumer;
    this.credential = credential;
  }

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

  /** kong.response.exit: stops the current handler; the response is produced after access. */
  exit(status: number, body?: string | object, headers?: Record<string, string | string[]>): never {
    this.exited = true;
    throw new ExitSignal({ status, body, headers });
  }

  /** kong.response.error: an exit whose body is Kong's error template for the client's Accept. */
  error(status: number, message?: string, headers: Record<string, string | string[]> = {}): never {
    this.exited = true;
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
}

/** Header maps are keyed by lower-case name. */
export function normalizeName(name: string): string {
  return name.toLowerCase();
}

function decodeQueryComponent(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}
