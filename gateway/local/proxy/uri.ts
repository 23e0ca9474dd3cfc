// Path handling of Kong 3.9.1: kong/tools/uri.lua (normalize, escape) and kong/router/utils.lua
// (strip_uri_args, sanitize_uri_postfix, get_upstream_uri_v0).

const RESERVED = new Set([...'!*\'();:@&=+$,/?%#[]'].map((c) => c.charCodeAt(0)));

/** Decodes percent-encoded unreserved characters, removes dot segments and merges slashes. */
export function normalizePath(uri: string): string {
  if (uri === '' || uri === '/') return uri;
  if (uri.includes('%')) {
    uri = uri.replace(/%([0-9A-Fa-f]{2})/g, (whole, hex: string) => {
      const code = parseInt(hex, 16);
      return RESERVED.has(code) ? whole.toUpperCase() : String.fromCharCode(code);
    });
  }
  if (!uri.includes('.') && !uri.includes('//')) return uri;
  const output: string[] = [];
  while (uri.length > 0) {
    if (uri === '/.') uri = '/';
    else if (uri === '/..') {
      uri = '/';
      output.pop();
    } else if (uri === '.' || uri === '..') uri = '';
    else if (uri.startsWith('../')) uri = uri.slice(3);
    else if (uri.startsWith('./')) uri = uri.slice(2);
    else if (uri.startsWith('/./')) uri = uri.slice(2);
    else if (uri.startsWith('/../')) {
      uri = uri.slice(3);
      output.pop();
    } else if (uri.startsWith('//')) uri = uri.slice(1);
    else {
      const i = uri.indexOf('/', 1);
      output.push(i === -1 ? uri : uri.slice(0, i));
      uri = i === -1 ? '' : uri.slice(i);
    }
  }
  return output.join('');
}

const ESCAPE = /[^!#$&'()*+,/:;=?@[\]A-Za-z0-9\-_.~%]/g;

/** kong/tools/uri.lua escape: percent-encodes what may not appear in the upstream request line. */
export function escapeUri(uri: string): string {
  return uri.replace(ESCAPE, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

function sanitizePostfix(postfix: string): string {
  if (postfix === '.' || postfix === '..') return '';
  if (postfix.startsWith('./')) return postfix.slice(2);
  if (postfix.startsWith('../')) return postfix.slice(3);
  return postfix;
}

/** The path sent upstream: the service path joined with what the route left of the request path. */
export function upstreamPath(
  requestPath: string,
  strippedPrefix: string | undefined,
  stripPath: boolean,
  servicePath: string | null,
): string {
  const base = servicePath ?? '/';
  const postfix = sanitizePostfix(requestPath.slice((strippedPrefix ?? '/').length));
  if (base.endsWith('/')) {
    if (stripPath) {
      if (postfix === '') {
        if (base === '/') return '/';
        return requestPath.endsWith('/') ? base : base.slice(0, -1);
      }
      return postfix.startsWith('/') ? base.slice(0, -1) + postfix : base + postfix;
    }
    return base + requestPath.slice(1);
  }
  if (stripPath) {
    if (postfix === '') return requestPath.length > 1 && requestPath.endsWith('/') ? `${base}/` : base;
    return postfix.startsWith('/') ? base + postfix : `${base}/${postfix}`;
  }
  return requestPath === '/' ? base : base + requestPath;
}
