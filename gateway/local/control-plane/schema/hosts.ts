/**
 * Kong's host checks (kong/tools/ip.lua normalize_ip, kong/db/schema/typedefs.lua host and hosts):
 * an IPv4 or IPv6 address, or a hostname of letters, digits, `-`, `.` and `_` whose labels neither
 * end with `-` nor are empty (a trailing dot aside), each with an optional port up to 65535.
 */
type Parsed = { type: 'ipv4' | 'ipv6' | 'name'; port?: number } | { error: string };

function hostnameType(name: string): 'ipv4' | 'ipv6' | 'name' {
  if ((name.match(/:/g)?.length ?? 0) > 1) return 'ipv6';
  return /^[\d.]+$/.test(name.replaceAll(':', '')) ? 'ipv4' : 'name';
}

function port(text: string | undefined): number | undefined | 'invalid' {
  if (text === undefined) return undefined;
  const value = Number(text);
  return value > 65535 ? 'invalid' : value;
}

function parseIpv4(address: string): Parsed {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::(\d+))?$/.exec(address);
  if (!match || match.slice(1, 5).some((octet) => Number(octet) > 255)) return { error: `invalid ipv4 address: ${address}` };
  const p = port(match[5]);
  return p === 'invalid' ? { error: 'invalid port number' } : { type: 'ipv4', port: p };
}

function parseIpv6(address: string): Parsed {
  const bracketed = /^\[([^\]]*)\](.*)$/.exec(address);
  let check = bracketed ? bracketed[1]! : address;
  let p: number | undefined;
  if (bracketed && bracketed[2] !== '') {
    const portText = /^:(\d*)$/.exec(bracketed[2]!)?.[1];
    if (portText === undefined) return { error: 'invalid ipv6 address' };
    const parsedPort = port(portText);
    if (parsedPort === 'invalid') return { error: 'invalid port number' };
    p = parsedPort;
  }
  if (check.startsWith(':')) check = `0${check}`;
  if (check.endsWith(':')) check = `${check}0`;
  if (check.includes('::')) {
    const colons = check.match(/:/g)?.length ?? 0;
    check = check.replace('::', `:${'0:'.repeat(Math.max(0, 8 - colons))}`);
  }
  if (!/^(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}$/.test(check)) return { error: `invalid ipv6 address: ${address}` };
  return { type: 'ipv6', port: p };
}

function parseName(address: string): Parsed {
  const portText = /:(\d+)$/.exec(address)?.[1];
  const name = portText === undefined ? address : address.slice(0, -(portText.length + 1));
  const p = port(portText);
  if (p === 'invalid') return { error: 'invalid port number' };
  if (!/^[\da-zA-Z\-._]+$/.test(name)) return { error: `invalid hostname: ${address}` };
  const labels = name.split('.');
  const bad = labels.some((label, i) => label.endsWith('-') || (label === '' && i !== labels.length - 1));
  return bad ? { error: `invalid hostname: ${address}` } : { type: 'name', port: p };
}

function parse(address: string): Parsed {
  const type = hostnameType(address);
  return type === 'ipv4' ? parseIpv4(address) : type === 'ipv6' ? parseIpv6(address) : parseName(address);
}

/** typedefs.host (a service's `host`): an address or a name, without a port. */
export function hostError(host: string): string | undefined {
  const parsed = parse(host);
  if ('error' in parsed) return parsed.error === 'invalid port number' ? 'must not have a port' : `invalid value: ${host}`;
  return parsed.port === undefined ? undefined : 'must not have a port';
}

/** typedefs.sni (validate_sni): a name, neither an IP address nor with a port. */
export function sniError(host: string): string | undefined {
  const parsed = parse(host);
  if ('error' in parsed) return parsed.error === 'invalid port number' ? 'must not have a port' : `invalid value: ${host}`;
  if (parsed.type !== 'name') return 'must not be an IP';
  return parsed.port === undefined ? undefined : 'must not have a port';
}

/** typedefs.hosts elements (a route's `hosts`): at most one `*`, as the leftmost or rightmost label. */
export function wildcardHostError(host: string): string | undefined {
  if ((host.match(/\*/g)?.length ?? 0) > 1) return 'invalid wildcard: must have at most one wildcard';
  if (host.includes('*') && !host.startsWith('*.') && !host.endsWith('.*')) {
    return 'invalid wildcard: must be placed at leftmost or rightmost label';
  }
  const parsed = parse(host.replaceAll('*', 'abc'));
  return 'error' in parsed ? parsed.error : undefined;
}

/**
 * typedefs.wildcard_host (an SNI's name): one `*`, as the first or last character, the rest a
 * name (neither an IP address nor with a port). validate_wildcard_host reports the value checked,
 * with the wildcard replaced by "wildcard".
 */
export function wildcardSniError(host: string): string | undefined {
  const index = host.indexOf('*');
  let checked = host;
  if (index !== -1) {
    if (index !== 0 && index !== host.length - 1) return 'wildcard must be leftmost or rightmost character';
    checked = host.replaceAll('*', 'wildcard');
    if (checked.length - host.length > 'wildcard'.length - 1) return 'only one wildcard must be specified';
  }
  const parsed = parse(checked);
  if ('error' in parsed && parsed.error !== 'invalid port number') return `invalid value: ${checked}`;
  if ('error' in parsed) return 'must not have a port';
  if (parsed.type !== 'name') return 'must not be an IP';
  return parsed.port === undefined ? undefined : 'must not have a port';
}
