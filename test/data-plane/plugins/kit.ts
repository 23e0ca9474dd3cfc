import { request, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestNode } from '../../helpers/data-plane.ts';
import { pollUntil } from '../../helpers/poll.ts';
import type { SeenRequest } from '../../helpers/upstream.ts';

// What the bundled plugins' tests share: Kong 3.9.3's config defaults (each plugin's schema.lua;
// the data plane runs complete configs only), the test clock, and an upstream answering as the
// parts of Kong's mock upstream (spec/fixtures/mock_upstream.lua) the transcribed specs use.

export const BUNDLED_PLUGINS = [
  'key-auth',
  'rate-limiting',
  'request-termination',
  'response-transformer',
  'correlation-id',
  'request-size-limiting',
  'acl',
];

/** test/data-plane/plugins/fixtures: plugins these tests load to look inside the node. */
export const PLUGIN_FIXTURES_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

type Config = Record<string, unknown>;

const TRANSFORM = () => ({ json: [], json_types: [], headers: [] });

/** kong/plugins/<name>/schema.lua defaults (and kong/tools/redis/schema.lua for redis). */
const DEFAULTS: Record<string, () => Config> = {
  'key-auth': () => ({
    key_names: ['apikey'],
    hide_credentials: false,
    anonymous: null,
    key_in_header: true,
    key_in_query: true,
    key_in_body: false,
    run_on_preflight: true,
    realm: null,
  }),
  'rate-limiting': () => ({
    second: null,
    minute: null,
    hour: null,
    day: null,
    month: null,
    year: null,
    limit_by: 'consumer',
    header_name: null,
    path: null,
    policy: 'local',
    fault_tolerant: true,
    redis: {
      host: null,
      port: 6379,
      timeout: 2000,
      username: null,
      password: null,
      database: 0,
      ssl: false,
      ssl_verify: false,
      server_name: null,
    },
    hide_client_headers: false,
    error_code: 429,
    error_message: 'API rate limit exceeded',
    sync_rate: -1,
  }),
  'request-termination': () => ({
    status_code: 503,
    message: null,
    content_type: null,
    body: null,
    echo: false,
    trigger: null,
  }),
  'response-transformer': () => ({
    remove: { json: [], headers: [] },
    rename: { json: [], headers: [] },
    replace: TRANSFORM(),
    add: TRANSFORM(),
    append: TRANSFORM(),
  }),
  'correlation-id': () => ({
    header_name: 'Kong-Request-ID',
    generator: 'uuid#counter',
    echo_downstream: false,
  }),
  acl: () => ({
    allow: null,
    deny: null,
    hide_groups_header: false,
    always_use_authenticated_groups: false,
  }),
  'request-size-limiting': () => ({
    allowed_payload_size: 128,
    size_unit: 'megabytes',
    require_content_length: false,
  }),
};

const isRecord = (value: unknown): value is Config => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The complete config of `name` with `config` over Kong's defaults (records merged, as Kong's schema fills them). */
export function configOf(name: string, config: Config = {}): Config {
  const defaults = DEFAULTS[name];
  if (!defaults) throw new Error(`no defaults for ${name}`);
  const merged = defaults();
  for (const [key, value] of Object.entries(config)) {
    const base = merged[key];
    merged[key] = isRecord(base) && isRecord(value) ? { ...base, ...value } : value;
  }
  return merged;
}

/** A plugin instance for the snapshot builder, config completed. */
export function plugin(name: string, scope: { route?: string; service?: string; consumer?: string }, config: Config = {}) {
  return { name, ...scope, config: configOf(name, config) };
}

/** Waits for nginx's error log (read from its stderr as it comes) to have a line matching `pattern`. */
export async function logged(node: TestNode, pattern: RegExp): Promise<void> {
  try {
    await pollUntil(`a log line matching ${pattern}`, async () => node.logsMatching(pattern).length > 0, { timeoutMs: 10_000 });
  } catch (error) {
    // what the node did log instead, for the reader of a failure that does not reproduce
    const recent = node.logsMatching(/\[(error|warn|crit|alert|emerg)\]/).slice(-15);
    throw new Error(`${(error as Error).message}; the node's last errors and warnings:\n${recent.join('\n')}`);
  }
}

/** PUT /clock?ms= on the node's test-clock socket: ngx.now()/ngx.time() answer `ms` from then on. */
export function setClock(node: TestNode, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: join(node.prefix, 'test-clock.sock'), method: 'PUT', path: `/clock?ms=${ms}` }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`PUT /clock answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

function queryOf(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of new URL(url, 'http://upstream').searchParams) {
    const seen = query[key];
    query[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
}

function paramsOf(req: SeenRequest): unknown {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return undefined;
  try {
    return JSON.parse(req.body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Kong's mock upstream, the parts the specs use: /status/<code> answers that status;
 * /response-headers answers with the query's pairs as headers (content-type included), CORS's
 * Access-Control-Allow-Origin and a Content-Length; /json-response sends the query's `body` as
 * the query's `type` (application/json by default); anything else (/request, /get, /post…)
 * describes the request as JSON: headers, url, uri_args, vars.request_uri, post_data (text, and
 * params for a JSON body).
 */
export function mockUpstream(req: SeenRequest, res: ServerResponse): void {
  const path = req.url.split('?')[0]!;
  const status = /^\/status\/(\d{3})$/.exec(path);
  const query = queryOf(req.url);
  const describe = {
    headers: req.headers,
    url: `http://${req.headers.host ?? 'upstream'}${req.url}`,
    uri_args: query,
    vars: { request_uri: req.url },
    post_data: { text: req.body, params: paramsOf(req) },
  };
  if (status) {
    const code = Number(status[1]);
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(code === 204 || code === 304 ? undefined : JSON.stringify(describe));
    return;
  }
  if (path === '/response-headers') {
    const body = JSON.stringify(query);
    const headers: Record<string, string | string[]> = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };
    for (const [name, value] of Object.entries(query)) headers[name] = value;
    headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(200, headers);
    res.end(body);
    return;
  }
  if (path === '/json-response') {
    const body = String(query.body ?? '{}');
    res.writeHead(200, { 'content-type': String(query.type ?? 'application/json'), 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(describe));
}
