import type { IncomingMessage } from 'node:http';
import { LARGE_CLIENT_HEADER_BUFFER_SIZE } from '../kong/nginx-defaults.ts';

/** What nginx takes from the request line and Host before Kong runs. */
export interface RequestTarget {
  /** Host without port: from an absolute-form target, else the Host header. */
  host: string;
  /** The Host value as sent (for preserve_host). */
  hostHeader: string | undefined;
  path: string;
  query: string;
}

/** A request nginx answers itself, before any of Kong's phases (no plugin runs). */
export interface EarlyRejection {
  status: number;
  /** Why, for the log (nginx's own wording where it has one). */
  reason: string;
}

const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)$/i;

/**
 * The checks ngx_http_parse_request_line / ngx_http_process_request_headers make that Node's
 * parser does not (nginx's limits: see kong/nginx-defaults.ts):
 * - a request line longer than one large header buffer → 414;
 * - a header line longer than one buffer → 494 ("Request header or cookie too large", sent as 400);
 * - TRACE → 405 ("client sent TRACE method"); HTTP/1.1 without Host → 400;
 * - a target that is neither origin-form (`/…`) nor absolute-form (`http://host/…`), `*` included → 400.
 */
export function readRequestHead(req: IncomingMessage): RequestTarget | EarlyRejection {
  const url = req.url ?? '';
  const method = req.method ?? '';
  if (method.length + url.length + 12 > LARGE_CLIENT_HEADER_BUFFER_SIZE) return { status: 414, reason: 'client sent too long URI' };
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length + raw[i + 1]!.length + 4 > LARGE_CLIENT_HEADER_BUFFER_SIZE) return { status: 494, reason: 'client sent too long header line' };
  }
  if (method === 'TRACE') return { status: 405, reason: 'client sent TRACE method' };
  const hostHeader = req.headers.host;
  if (req.httpVersion === '1.1' && hostHeader === undefined) return { status: 400, reason: 'client sent HTTP/1.1 request without "Host" header' };

  let host = hostHeader ?? '';
  let target = url;
  if (!url.startsWith('/')) {
    const absolute = ABSOLUTE_FORM.exec(url);
    if (!absolute) return { status: 400, reason: 'client sent invalid request' };
    // nginx: the host of an absolute-form target replaces the Host header's.
    host = absolute[1]!;
    target = absolute[2] || '/';
    if (!target.startsWith('/')) target = `/${target}`;
  }
  const q = target.indexOf('?');
  return {
    host: stripPort(host),
    hostHeader,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? '' : target.slice(q + 1),
  };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  return host.replace(/:\d*$/, '');
}
