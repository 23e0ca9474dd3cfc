import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nginxListen, parseListeners } from './listeners.ts';
import type { NginxBinary } from './nginx-binary.ts';
import { configuredCertificates, ensureDefaultCertificates, ensureDhParams } from './ssl-certificates.ts';
import { tlsSettings } from './ssl-settings.ts';

/** gateway/local/data-plane/: the nginx template and the Lua it runs. */
export const DATA_PLANE_DIR = fileURLToPath(new URL('../data-plane/', import.meta.url));

/** Kong's `headers` default (kong_defaults.lua). */
const DEFAULT_HEADERS = ['server_tokens', 'latency_tokens', 'X-Kong-Request-Id'];

/** A node's settings, named after Kong's (kong.conf / KONG_* variables). */
export interface NodeSettings {
  /**
   * proxy_listen, in Kong's syntax (cmd/listeners.ts): `host:port [ssl] [http2] [reuseport]
   * [backlog=N]…`, comma-separated. Port 0: a free port is picked at start.
   */
  proxyListen: string;
  /** ssl_cert / ssl_cert_key: paths or PEMs, as many of each; none: the default certificates. */
  sslCert: string[];
  sslCertKey: string[];
  /** ssl_cipher_suite, ssl_ciphers, ssl_protocols as given (cmd/ssl-settings.ts applies them). */
  sslCipherSuite?: string;
  sslCiphers?: string;
  sslProtocols?: string;
  /** status_listen: `host:port`, or null for none. */
  statusListen: string | null;
  /** nginx_worker_processes: a count or 'auto'. */
  workerProcesses: number | 'auto';
  /** nginx_http_lua_shared_dict entries: `name size`, e.g. `animal_store_edge 10m`. */
  sharedDicts: string[];
  trustedIps: string[];
  realIpHeader: string;
  realIpRecursive: boolean;
  headers: string[];
  /** cluster_control_plane: `unix:/path` or `host:port`; null runs snapshot.json only. */
  clusterControlPlane: string | null;
  /** Tests only: serve PUT /clock on unix:<prefix>/test-clock.sock. */
  testClock: boolean;
  /** Where custom plugins live (gateway/plugins): each `<name>/handler.lua`. */
  pluginsDir: string | null;
  /** The plugins the node loads: bundled and custom names. */
  plugins: string[];
  logLevel: string;
  nodeId: string;
  upstreamKeepalivePoolSize: number;
  upstreamKeepaliveMaxRequests: number;
  upstreamKeepaliveIdleTimeout: number;
  /** lua_shared_dict kong_snapshot: holds the running snapshot's JSON. */
  snapshotDictSize: string;
  /**
   * lua_shared_dict prometheus_metrics, unless `sharedDicts` declares it (as Kong's conf_loader
   * injects it for the prometheus plugin). See PROMETHEUS_DICT_SIZE.
   */
  prometheusDictSize: string;
  /**
   * lua_ssl_trusted_certificate: the CAs cosockets verify against (rate-limiting's and the edge
   * plugin's Redis with ssl_verify). Each entry "system" (the system's bundle), a PEM file's path,
   * or a PEM itself (base64-encoded or not), as Kong's conf loader takes them.
   */
  luaSslTrustedCertificate: string[];
  /** lua_ssl_verify_depth. */
  luaSslVerifyDepth: number;
}

/**
 * The prometheus plugin's dict. Kong injects 5m; with per_consumer each consumer that sends
 * requests adds a series per status code and two for bandwidth, ~256 bytes each: 10,000 consumers
 * with one request each fill 7.4 MiB (test/bench/prometheus-cardinality.ts), and 5m evicts series
 * from ~6,700 on. 16m holds 10,000 with two status codes each, or ~20,000 with one.
 */
export const PROMETHEUS_DICT_SIZE = '16m';

const DEFAULT_NODE_SETTINGS: Omit<NodeSettings, 'nodeId'> = {
  // reuseport backlog=16384: the flags of Kong's default proxy_listen (kong_defaults.lua:27)
  proxyListen: '127.0.0.1:0 reuseport backlog=16384',
  sslCert: [],
  sslCertKey: [],
  statusListen: null,
  workerProcesses: 'auto',
  sharedDicts: [],
  trustedIps: [],
  realIpHeader: 'X-Real-IP',
  realIpRecursive: false,
  headers: DEFAULT_HEADERS,
  clusterControlPlane: null,
  testClock: false,
  pluginsDir: null,
  plugins: [],
  logLevel: 'notice',
  upstreamKeepalivePoolSize: 512,
  upstreamKeepaliveMaxRequests: 10000,
  upstreamKeepaliveIdleTimeout: 60,
  snapshotDictSize: '32m',
  prometheusDictSize: PROMETHEUS_DICT_SIZE,
  // kong_defaults.lua: lua_ssl_trusted_certificate = system. Not here by default: the system's
  // bundle costs each nginx process ~9 MB RSS (OpenSSL's parsed store), a fifth of the memory
  // budget, for Redis TLS that kong.yml does not use. KONG_LUA_SSL_TRUSTED_CERTIFICATE=system
  // asks for it (docs/known-differences.md).
  luaSslTrustedCertificate: [],
  luaSslVerifyDepth: 1,
};

export function withDefaults(settings: Partial<NodeSettings>): NodeSettings {
  return { ...DEFAULT_NODE_SETTINGS, nodeId: randomUUID(), ...settings };
}

/** The node's settings as Kong.init() reads them from <prefix>/kong_conf.json (nginx passes no environment). */
interface KongConf {
  node_id: string;
  prefix: string;
  cluster_control_plane: string | null;
  plugins: string[];
  headers: string[];
  trusted_ips: string[];
  real_ip_header: string;
  real_ip_recursive: 'on' | 'off';
  test_clock: boolean;
  log_level: string;
}

const SHARED_DICT = /^[A-Za-z_][A-Za-z0-9_]*\s+\d+[kKmM]?$/;
const LISTEN = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;


function checkSettings(settings: NodeSettings): void {
  for (const dict of settings.sharedDicts) {
    if (!SHARED_DICT.test(dict.trim())) throw new Error(`KONG_NGINX_HTTP_LUA_SHARED_DICT: expected "name size" (e.g. "cache 10m"), got ${JSON.stringify(dict)}`);
  }
  if (parseListeners('KONG_PROXY_LISTEN', settings.proxyListen).length === 0) {
    throw new Error('KONG_PROXY_LISTEN: off is not supported: a data-plane node is a proxy');
  }
  if (settings.statusListen !== null && !LISTEN.test(settings.statusListen)) {
    throw new Error(`KONG_STATUS_LISTEN: expected host:port, got ${JSON.stringify(settings.statusListen)}`);
  }
  if (settings.workerProcesses !== 'auto' && !(Number.isInteger(settings.workerProcesses) && settings.workerProcesses > 0)) {
    throw new Error(`KONG_NGINX_WORKER_PROCESSES: expected a positive integer or "auto", got ${String(settings.workerProcesses)}`);
  }
  for (const ip of settings.trustedIps) {
    if (!/^(?:unix:|[0-9A-Fa-f:.]+(?:\/\d{1,3})?)$/.test(ip)) throw new Error(`KONG_TRUSTED_IPS: not an address or CIDR: ${JSON.stringify(ip)}`);
  }
  if (!(Number.isInteger(settings.luaSslVerifyDepth) && settings.luaSslVerifyDepth >= 0)) {
    throw new Error(`KONG_LUA_SSL_VERIFY_DEPTH: expected a non-negative integer, got ${String(settings.luaSslVerifyDepth)}`);
  }
  if (!/^[A-Za-z0-9_-]+$/.test(settings.realIpHeader)) throw new Error(`KONG_REAL_IP_HEADER: not a header name: ${JSON.stringify(settings.realIpHeader)}`);
  for (const plugin of settings.plugins) {
    if (!/^[a-z0-9_-]+$/i.test(plugin)) throw new Error(`KONG_PLUGINS: not a plugin name: ${JSON.stringify(plugin)}`);
  }
}

/** kong/tools/system.lua's trusted_certs_paths: where "system" looks, first found wins. */
const SYSTEM_CA_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * lua_ssl_trusted_certificate's entries as kong/conf_loader/parse.lua reads them: "system" is the
 * first system bundle found (none found: left out, as Kong only logs it), a path is read, anything
 * else must be a PEM certificate, base64-encoded or not. Their PEMs, in order.
 */
function trustedCertificates(entries: string[]): string[] {
  const pems: string[] = [];
  for (const entry of entries) {
    if (entry === 'system') {
      const bundle = SYSTEM_CA_BUNDLES.find((path) => existsSync(path));
      if (bundle) pems.push(readFileSync(bundle, 'utf8'));
      continue;
    }
    if (existsSync(entry) && statSync(entry).isFile()) {
      const pem = readFileSync(entry, 'utf8');
      if (!PEM_CERTIFICATE.test(pem)) throw new Error(`KONG_LUA_SSL_TRUSTED_CERTIFICATE: no PEM certificate in ${entry}`);
      pems.push(pem);
      continue;
    }
    const decoded = PEM_CERTIFICATE.test(entry) ? entry : Buffer.from(entry, 'base64').toString('utf8');
    if (!PEM_CERTIFICATE.test(decoded)) {
      throw new Error(`KONG_LUA_SSL_TRUSTED_CERTIFICATE: failed loading certificate from ${entry.length > 80 ? `${entry.slice(0, 80)}…` : entry}`);
    }
    pems.push(decoded);
  }
  return pems;
}

/**
 * Kong's trusted_ips take 0.0.0.0/0 and ::/0 for "all"; set_real_ip_from wants one address or
 * CIDR per line, and `unix:` as written.
 */
function realIpLines(trustedIps: string[]): string[] {
  return trustedIps.map((ip) => `set_real_ip_from ${ip};`);
}

/** ${name} placeholders, whole-line list placeholders and `#> if` sections (see the template's header). */
export function renderTemplate(template: string, values: Record<string, string | string[]>, flags: Record<string, boolean>): string {
  const out: string[] = [];
  let keep = true;
  for (const line of template.split('\n')) {
    const section = /^#> if (\w+)\s*$/.exec(line);
    if (section) {
      keep = flags[section[1]!] === true;
      continue;
    }
    if (/^#> end\s*$/.test(line)) {
      keep = true;
      continue;
    }
    if (!keep) continue;
    if (/^\s*#/.test(line)) {
      out.push(line);
      continue;
    }
    const whole = /^(\s*)\$\{(\w+)\}\s*$/.exec(line);
    if (whole && Array.isArray(values[whole[2]!])) {
      for (const item of values[whole[2]!] as string[]) out.push(whole[1] + item);
      continue;
    }
    out.push(
      line.replace(/\$\{(\w+)\}/g, (_, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`nginx.conf template: no value for \${${name}}`);
        return Array.isArray(value) ? value.join(' ') : value;
      }),
    );
  }
  return out.join('\n');
}

function luaPackagePath(prefix: string): string {
  const lua = join(DATA_PLANE_DIR, 'lua');
  return [`${prefix}/lua/?.lua`, `${prefix}/lua/?/init.lua`, `${lua}/?.lua`, `${lua}/?/init.lua`, ''].join(';') + ';';
}

/** `user` only means something when the master runs as root: then workers stay root too (the invoking user). */
function userDirective(): string {
  return process.getuid?.() === 0 ? `user ${userInfo().username};` : '';
}

function workerConnections(): number {
  // kong/cmd/utils/prefix_handler.lua: `auto` is ulimit -n within [1024, 16384]; Node cannot
  // read RLIMIT_NOFILE, and nginx raises its own limit with worker_rlimit_nofile.
  return 16384;
}

/** Where the files of a prefix are. */
export function prefixPaths(prefix: string) {
  return {
    nginxConf: join(prefix, 'nginx.conf'),
    kongConf: join(prefix, 'kong_conf.json'),
    snapshot: join(prefix, 'snapshot.json'),
    testClockSocket: join(prefix, 'test-clock.sock'),
    pluginsJson: join(prefix, 'plugins.json'),
    pid: join(prefix, 'pids', 'nginx.pid'),
    /** The status API for the control plane (always on, whatever status_listen says). */
    statusSocket: join(prefix, 'status.sock'),
  };
}

/**
 * Writes a file through a temporary one and a rename, as the data plane writes snapshot.json;
 * with `mode` (0o600 for a file with secrets) it is created with no more than that, whatever the umask.
 */
export function writeFileAtomically(path: string, contents: string, mode?: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  // a leftover of a killed process would keep its mode
  rmSync(tmp, { force: true });
  writeFileSync(tmp, contents, mode === undefined ? {} : { mode });
  renameSync(tmp, path);
}

/** <prefix>/lua/kong/plugins/<name> → <pluginsDir>/<name>, for each listed plugin found there. */
function linkCustomPlugins(prefix: string, pluginsDir: string | null, plugins: string[]): void {
  const target = join(prefix, 'lua', 'kong', 'plugins');
  rmSync(join(prefix, 'lua'), { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  if (!pluginsDir || !existsSync(pluginsDir)) return;
  const wanted = new Set(plugins);
  for (const name of readdirSync(pluginsDir)) {
    const dir = resolve(pluginsDir, name);
    if (wanted.has(name) && statSync(dir).isDirectory() && existsSync(join(dir, 'handler.lua'))) symlinkSync(dir, join(target, name));
  }
}

/**
 * Creates (or refreshes) a node's prefix, as `kong prepare` does: nginx.conf rendered from the
 * template, kong_conf.json, the custom plugins linked in, nginx's directories.
 */
export async function preparePrefix(
  prefix: string,
  settings: NodeSettings,
  nginx: NginxBinary,
  proxyListen = settings.proxyListen,
  statusListen = settings.statusListen,
): Promise<void> {
  checkSettings(settings);
  if (!/^\d+[kKmM]?$/.test(settings.prometheusDictSize)) throw new Error(`prometheus_metrics: expected a size such as 5m, got ${JSON.stringify(settings.prometheusDictSize)}`);
  for (const dir of ['', 'logs', 'pids', 'client_body_temp', 'proxy_temp', 'fastcgi_temp', 'uwsgi_temp', 'scgi_temp']) {
    mkdirSync(join(prefix, dir), { recursive: true });
  }
  linkCustomPlugins(prefix, settings.pluginsDir, settings.plugins);
  // kong/cmd/utils/prefix_handler.lua: the trusted certificates combined into <prefix>/.ca_combined
  const trusted = trustedCertificates(settings.luaSslTrustedCertificate);
  const caCombined = join(prefix, '.ca_combined');
  if (trusted.length > 0) writeFileAtomically(caCombined, trusted.map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)).join(''));
  else rmSync(caCombined, { force: true });
  const listeners = parseListeners('KONG_PROXY_LISTEN', proxyListen);
  const proxySsl = listeners.some((listener) => listener.ssl);
  const tls = tlsSettings({ suite: settings.sslCipherSuite, ciphers: settings.sslCiphers, protocols: settings.sslProtocols });
  // prefix_handler.lua: the default certificates are made only when an ssl listener needs them
  const certificates = !proxySsl
    ? []
    : settings.sslCert.length > 0 || settings.sslCertKey.length > 0
      ? configuredCertificates(prefix, settings.sslCert, settings.sslCertKey)
      : await ensureDefaultCertificates(prefix);
  const dhparam = proxySsl && tls.dhparam ? await ensureDhParams(prefix) : undefined;
  const template = readFileSync(join(DATA_PLANE_DIR, 'nginx.conf'), 'utf8');
  const conf = renderTemplate(
    template,
    {
      load_modules: nginx.loadModules,
      user: userDirective(),
      worker_processes: String(settings.workerProcesses),
      worker_connections: String(workerConnections()),
      log_level: settings.logLevel,
      lua_package_path: luaPackagePath(prefix),
      snapshot_dict_size: settings.snapshotDictSize,
      prometheus_dict: settings.sharedDicts.some((dict) => dict.trim().split(/\s+/)[0] === 'prometheus_metrics')
        ? []
        : [`lua_shared_dict prometheus_metrics ${settings.prometheusDictSize};`],
      shared_dicts: settings.sharedDicts.map((dict) => `lua_shared_dict ${dict.trim().replace(/\s+/, ' ')};`),
      upstream_keepalive_pool_size: String(settings.upstreamKeepalivePoolSize),
      upstream_keepalive_max_requests: String(settings.upstreamKeepaliveMaxRequests),
      upstream_keepalive_idle_timeout: String(settings.upstreamKeepaliveIdleTimeout),
      proxy_listen: listeners.map((listener) => nginxListen(listener)),
      ssl_certificates: certificates.flatMap(({ cert, key }) => [`ssl_certificate     '${cert}';`, `ssl_certificate_key '${key}';`]),
      ssl_ciphers: tls.ciphers ? [`ssl_ciphers ${tls.ciphers};`] : [],
      ssl_protocols: tls.protocols,
      ssl_prefer_server_ciphers: tls.preferServerCiphers,
      ssl_dhparam: dhparam ? [`ssl_dhparam '${dhparam}';`] : [],
      status_listen: statusListen ? [`listen ${statusListen};`] : [],
      real_ip_header: settings.realIpHeader,
      real_ip_recursive: settings.realIpRecursive ? 'on' : 'off',
      set_real_ip_from: realIpLines(settings.trustedIps),
      lua_ssl_verify_depth: String(settings.luaSslVerifyDepth),
      lua_ssl_trusted_certificate: trusted.length > 0 ? [`lua_ssl_trusted_certificate '${caCombined}';`] : [],
      prefix,
    },
    { test_clock: settings.testClock, proxy_ssl: proxySsl },
  );
  writeFileAtomically(prefixPaths(prefix).nginxConf, conf);
  // nginx does not reuse a unix socket a killed node, or a start that failed on a busy port, left
  // behind: it would fail to bind it
  rmSync(prefixPaths(prefix).statusSocket, { force: true });
  rmSync(prefixPaths(prefix).testClockSocket, { force: true });
  const kongConf: KongConf = {
    node_id: settings.nodeId,
    prefix,
    cluster_control_plane: settings.clusterControlPlane,
    plugins: settings.plugins,
    headers: settings.headers,
    trusted_ips: settings.trustedIps,
    real_ip_header: settings.realIpHeader,
    real_ip_recursive: settings.realIpRecursive ? 'on' : 'off',
    test_clock: settings.testClock,
    log_level: settings.logLevel,
  };
  writeFileAtomically(prefixPaths(prefix).kongConf, `${JSON.stringify(kongConf, null, 2)}\n`);
}
