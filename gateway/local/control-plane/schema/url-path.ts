/** The parts of a URL as LuaSocket 3.0-rc1's socket.url.parse splits it (src/url.lua:126-175). */
export interface LuaSocketUrl {
  scheme?: string;
  host?: string;
  port?: string;
  path?: string;
}

/**
 * socket.url.parse, which Kong's service `url` shorthand reads (kong/db/schema/entities/services.lua:76-106):
 * no normalization, nothing refused; the fragment, the query and `;params` are cut off, the rest
 * after the authority is the path.
 */
export function parseLuaSocketUrl(url: string): LuaSocketUrl {
  const parsed: LuaSocketUrl = {};
  let rest = url.replace(/#.*$/s, '');
  rest = rest.replace(/^([A-Za-z0-9][A-Za-z0-9+.-]*):/, (_match, scheme: string) => {
    parsed.scheme = scheme;
    return '';
  });
  let authority: string | undefined;
  rest = rest.replace(/^\/\/([^/]*)/, (_match, found: string) => {
    authority = found;
    return '';
  });
  rest = rest.replace(/\?.*$/s, '').replace(/;.*$/s, '');
  if (rest !== '') parsed.path = rest;
  if (authority === undefined) return parsed;
  authority = authority.replace(/^[^@]*@/, '').replace(/:([^:\]]*)$/, (_match, port: string) => {
    parsed.port = port;
    return '';
  });
  if (authority !== '') parsed.host = /^\[(.+)\]$/s.exec(authority)?.[1] ?? authority;
  return parsed;
}

const RFC3986_PATH = /^\/[A-Za-z0-9._~/%:@!$&'()*+,;=-]*$/;

/**
 * typedefs.path (kong/db/schema/typedefs.lua:71-93, 318-328): starts with `/`, no empty segment,
 * RFC 3986's characters only, percent-escapes well formed; Kong's messages, in its order.
 */
export function pathError(path: string): string | undefined {
  if (!path.startsWith('/')) return 'should start with: /';
  if (path.includes('//')) return 'must not have empty segments';
  if (!RFC3986_PATH.test(path)) return `invalid path: '${path}' (characters outside of the reserved list of RFC 3986 found)`;
  const bad = /%.?.?/s.exec(path.replace(/%[0-9A-Fa-f]{2}/g, '___'));
  return bad ? `invalid url-encoded value: '${bad[0]}'` : undefined;
}
