/**
 * Kong's error responses (kong/tools/http.lua get_response_type + get_error_template, and
 * kong/error_handlers.lua): the body format follows the Accept header, JSON by default.
 */
const JSON_TYPE = 'application/json; charset=utf-8';
const MIME_TYPES: Record<string, string> = {
  'text/html': 'text/html; charset=utf-8',
  'application/json': JSON_TYPE,
  'text/plain': 'text/plain; charset=utf-8',
  'application/xml': 'application/xml; charset=utf-8',
  'application/*': JSON_TYPE,
  'text/*': 'text/plain; charset=utf-8',
  '*/*': JSON_TYPE,
};

function mimeTypeOf(mediaRange: string): string {
  const base = mediaRange.split(';')[0]!.trim().toLowerCase();
  const [type, subtype] = base.split('/');
  if (subtype === undefined) return JSON_TYPE;
  if (subtype === '*') return type === '*' ? JSON_TYPE : (MIME_TYPES[`${type}/*`] ?? JSON_TYPE);
  return MIME_TYPES[base] ?? JSON_TYPE;
}

const ACCEPT_VALUE = /^((?:[a-z0-9][a-z0-9\-!#$&^_+.]+|\*)\/(?:[a-z0-9][a-z0-9\-!#$&^_+.]+|\*))((?:\s*;\s*[^;]*)*)$/i;

/** The response Content-Type Kong picks for an error, given the request's Accept header. */
export function errorContentType(accept: string | undefined): string {
  if (accept === undefined) return JSON_TYPE;
  let chosen = JSON_TYPE;
  let best = 0;
  for (const raw of accept.split(',')) {
    const match = ACCEPT_VALUE.exec(raw.trim());
    if (!match) continue;
    const q = /;\s*q\s*=\s*(1(?:\.0{0,3})?|0(?:\.\d{0,3})?)/i.exec(match[2] ?? '');
    const quality = q ? Number(q[1]) : 1;
    if (quality > best) {
      best = quality;
      chosen = mimeTypeOf(match[1]!);
    }
  }
  return chosen;
}

function escapeFor(contentType: string, text: string): string {
  // Kong formats with string.format and does not escape; we escape JSON so bodies stay valid.
  return contentType.startsWith('application/json') ? JSON.stringify(text).slice(1, -1) : text;
}

export function renderError(contentType: string, message: string, requestId: string): string {
  const m = escapeFor(contentType, message);
  if (contentType.startsWith('text/html')) {
    return `<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>Error</title>\n  </head>\n  <body>\n    <h1>Error</h1>\n    <p>${m}.</p>\n    <p>request_id: ${requestId}</p>\n  </body>\n</html>\n`;
  }
  if (contentType.startsWith('text/plain')) return `${m}\nrequest_id: ${requestId}\n`;
  if (contentType.startsWith('application/xml')) {
    return `<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <message>${m}</message>\n  <requestid>${requestId}</requestid>\n</error>\n`;
  }
  return `{\n  "message":"${m}",\n  "request_id":"${requestId}"\n}`;
}

/** Default messages of kong.response.error (kong/pdk/response.lua HTTP_ERROR_MESSAGES). */
const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request', 401: 'Unauthorized', 402: 'Payment required', 403: 'Forbidden', 404: 'Not found',
  405: 'Method not allowed', 406: 'Not acceptable', 407: 'Proxy authentication required', 408: 'Request timeout',
  409: 'Conflict', 410: 'Gone', 411: 'Length required', 412: 'Precondition failed', 413: 'Payload too large',
  414: 'URI too long', 415: 'Unsupported media type', 416: 'Range not satisfiable', 417: 'Expectation failed',
  418: "I'm a teapot", 421: 'Misdirected request', 422: 'Unprocessable entity', 423: 'Locked',
  424: 'Failed dependency', 425: 'Too early', 426: 'Upgrade required', 428: 'Precondition required',
  429: 'Too many requests', 431: 'Request header fields too large', 451: 'Unavailable for legal reasons',
  494: 'Request header or cookie too large', 500: 'An unexpected error occurred', 501: 'Not implemented',
  502: 'An invalid response was received from the upstream server',
  503: 'The upstream server is currently unavailable', 504: 'The upstream server is timing out',
  505: 'HTTP version not supported', 506: 'Variant also negotiates', 507: 'Insufficient storage',
  508: 'Loop detected', 510: 'Not extended', 511: 'Network authentication required',
};

export function defaultErrorMessage(status: number): string {
  return STATUS_MESSAGES[status] ?? `The upstream server responded with ${status}`;
}
