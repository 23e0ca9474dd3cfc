import { isIP } from 'node:net';
import { hostError, sniError, wildcardHostError } from '../hosts.ts';
import { pathError } from '../url-path.ts';

/**
 * The checks behind the typedefs custom plugins' schema.lua files use. Kong's typedefs
 * (kong/db/schema/typedefs.lua) validate with Lua functions; the data plane's copy names the
 * check instead (`typedef = "<name>"`) and the control plane applies it here. A typedef not
 * listed is refused by name.
 */
type Check = (value: string) => string | undefined;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** typedefs.header_name (typedefs.lua:345-348, kong/tools/http.lua:271-282): letters, digits, '-' and '_'. */
export const headerNameError = (value: string): string | undefined =>
  /^[A-Za-z0-9_-]+$/.test(value) ? undefined : `bad header name '${value}', allowed characters are A-Z, a-z, 0-9, '_', and '-'`;

function cidrError(value: string, family?: 4): string | undefined {
  const [address, bits, extra] = value.split('/');
  const version = isIP(address ?? '');
  if (extra !== undefined || version === 0 || (family && version !== family)) return `invalid cidr range: ${value}`;
  if (bits === undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? undefined : `invalid cidr range: ${value}`;
}

export const TYPEDEF_CHECKS: Readonly<Record<string, Check>> = {
  host: hostError,
  sni: sniError,
  wildcard_host: wildcardHostError,
  host_with_optional_port: (value) => {
    const match = /^(.*?)(?::(\d{1,5}))?$/.exec(value)!;
    if (match[2] !== undefined && Number(match[2]) > 65535) return 'invalid port number';
    return hostError(match[1]!);
  },
  ip: (value) => (isIP(value) ? undefined : `not an ip address: ${value}`),
  ip_or_cidr: (value) => (isIP(value) ? undefined : cidrError(value)),
  cidr_v4: (value) => cidrError(value, 4),
  header_name: headerNameError,
  cookie_name: (value) => (TOKEN.test(value) ? undefined : `bad cookie name '${value}'`),
  // kong/db/schema/typedefs.lua:318-328 typedefs.path
  path: pathError,
  url: (value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : `missing host in url`;
    } catch {
      return `missing host in url`;
    }
  },
  // kong/db/schema/typedefs.lua validate_name: utf8 letters, digits and . - _ ~
  name: (value) => (/^[\p{L}\p{N}._~-]+$/u.test(value) ? undefined : `invalid value '${value}': it must only contain alphanumeric and '., -, _, ~' characters`),
};
