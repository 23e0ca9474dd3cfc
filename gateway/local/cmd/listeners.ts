/**
 * Kong's listen settings (kong/conf_loader/listeners.lua): comma-separated entries
 * `<ip>:<port> [ssl] [http2] [proxy_protocol] [deferred] [bind] [reuseport] [backlog=N]
 * [ipv6only=on|off] [so_keepalive=…]`, or `off`.
 */
export interface Listener {
  /** The address as nginx takes it (IPv6 without brackets here). */
  host: string;
  /** 0: a free port is picked when the node starts. */
  port: number;
  ssl: boolean;
  http2: boolean;
  /** The other flags, as written (`reuseport`, `backlog=16384`…). */
  flags: string[];
}

/** listeners.lua's subsystem_flags.http, in its order ("ssl" and "http2" kept apart above). */
const HTTP_FLAGS = [
  /^proxy_protocol$/, /^deferred$/, /^bind$/, /^reuseport$/, /^backlog=\d+$/, /^ipv6only=(?:on|off)$/,
  /^so_keepalive=(?:on|off|\w*:\w*:\d*)$/,
];

const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.*-]+):(\d{1,5})$/;

export class ListenerError extends Error {}

function usage(name: string): string {
  return `${name} must be of form: [off] | <ip>:<port> [ssl] [http2] [proxy_protocol] [deferred] [bind] [reuseport] [backlog=%d+] [ipv6only=on|off] [so_keepalive=…], [... next entry ...]`;
}

/** The entries of a listen setting; [] for `off`. Throws ListenerError naming the setting. */
export function parseListeners(name: string, value: string): Listener[] {
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries[0] === 'off') return [];
  return entries.map((entry) => {
    const [address = '', ...words] = entry.split(/\s+/);
    const match = ADDRESS.exec(address);
    const port = Number(match?.[2]);
    if (!match || port > 65535) throw new ListenerError(`${usage(name)}; got ${JSON.stringify(entry)}`);
    const listener: Listener = { host: match[1]!.replace(/^\[|\]$/g, ''), port, ssl: false, http2: false, flags: [] };
    for (const word of words) {
      if (word === 'ssl') listener.ssl = true;
      else if (word === 'http2') listener.http2 = true;
      else if (HTTP_FLAGS.some((flag) => flag.test(word))) listener.flags.push(word);
      else throw new ListenerError(`${usage(name)}; got ${JSON.stringify(entry)}`);
    }
    return listener;
  });
}

/** listeners.lua subsystem_flags.http after ssl and http2: each flag answered true or false, a pattern by its match. */
const KONG_FLAGS = ['proxy_protocol', 'deferred', 'bind', 'reuseport', 'backlog=%d+', 'ipv6only=on', 'ipv6only=off', 'so_keepalive=on', 'so_keepalive=off', 'so_keepalive=%w*:%w*:%d*'];
const KONG_FLAG_PATTERNS: Record<string, RegExp> = { 'backlog=%d+': /^backlog=\d+$/, 'so_keepalive=%w*:%w*:%d*': /^so_keepalive=\w*:\w*:\d*$/ };

/**
 * A listener as Kong's configuration holds it (kong/conf_loader/listeners.lua parse_listeners):
 * `ip`, `port`, a boolean per flag, and `listener`, the line without `http2`. GET / reports them.
 */
export function kongListener(listener: Listener): Record<string, unknown> {
  const entry: Record<string, unknown> = { ssl: listener.ssl, http2: listener.http2 };
  const flags = [...(listener.ssl ? ['ssl'] : []), ...listener.flags];
  for (const flag of KONG_FLAGS) {
    const pattern = KONG_FLAG_PATTERNS[flag];
    const found = pattern ? listener.flags.find((word) => pattern.test(word)) : listener.flags.includes(flag) ? flag : undefined;
    entry[found ?? flag] = found !== undefined;
  }
  const ip = listener.host.includes(':') ? `[${listener.host}]` : listener.host;
  return { ...entry, ip, port: listener.port, listener: [`${ip}:${listener.port}`, ...flags].join(' ') };
}

export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The listener written back in Kong's syntax (the port as given). */
export function formatListener(listener: Listener, port = listener.port): string {
  return [hostPort(listener.host, port), ...(listener.ssl ? ['ssl'] : []), ...(listener.http2 ? ['http2'] : []), ...listener.flags].join(' ');
}

/**
 * nginx 1.22's `listen` parameters: `http2` is a flag of listen there (Kong 3.9's nginx 1.25
 * writes `http2 on;` in the server instead, nginx_kong.lua:93-98).
 */
export function nginxListen(listener: Listener, port = listener.port): string {
  return `listen ${formatListener(listener, port)};`;
}
