import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// An in-memory Admin API that answers as Kong 3.9 does, for what the provisioning CLI calls:
// consumers, their plugins and their key-auth credentials. Shapes and rules it follows:
// - every entity is read with `nulls = true` (kong/api/endpoints.lua, extract_options): unset
//   fields come back as JSON null, a key-auth credential without a ttl reads `"ttl": null`;
// - a credential's ttl is read as whole seconds left, FLOOR of the interval
//   (kong/db/strategies/postgres/init.lua:1064-1067), and an expired one is never returned (:1070);
// - a ttl of 0 on insert or update means "never expires" (postgres/init.lua:356, get_ttl_value);
//   else an insert expires ttl seconds after its created_at, whole seconds (typedefs.lua
//   auto_timestamp_s), an update ttl seconds after now, to the fraction (:363-376, get_updated_now):
//   `startKongShapedAdmin({ now })` and `advance` take fractions of a second;
// - a key-auth `key` is unique (kong/plugins/key-auth/daos.lua), as are a consumer's username and
//   custom_id; a duplicate answers 409 naming the field and its value (kong/db/errors.lua:361-369,
//   unique_violation);
// - `?tags=a,b` lists entities carrying every tag; deleting a consumer cascades.
// Every request is recorded as it arrived (method, raw URL, raw body), so a test can check what
// the Admin API was sent.

interface Credential {
  id: string;
  created_at: number;
  consumer: { id: string };
  key: string;
  tags: string[] | null;
  /** Unix seconds after which it no longer exists; null for never. */
  expiresAt: number | null;
}

interface Consumer {
  id: string;
  created_at: number;
  updated_at: number;
  username: string | null;
  custom_id: string | null;
  tags: string[] | null;
}

interface PluginEntity {
  id: string;
  name: string;
  created_at: number;
  consumer: { id: string };
  route: { id: string } | null;
  service: { id: string } | null;
  config: Record<string, unknown>;
  tags: string[] | null;
  enabled: boolean;
}

interface RecordedRequest {
  method: string;
  url: string;
  body: string;
}

export interface KongShapedAdmin {
  url: string;
  requests: RecordedRequest[];
  /** Seconds since the epoch, as the double's clock reads now. */
  now(): number;
  advance(seconds: number): void;
  /** The next request matching method and path (a RegExp on the path) answers `status`. */
  failNext(method: string, path: RegExp, status?: number): void;
  /** The next request matching is applied, then its connection closed without an answer. */
  dropAnswerNext(method: string, path: RegExp): void;
  addConsumer(username: string, tags: string[]): Consumer;
  /** A rate-limiting plugin on the consumer, e.g. another team's scoped to a route of theirs. */
  addPlugin(consumerId: string, options: { route?: { id: string }; tags: string[]; config: Record<string, unknown> }): PluginEntity;
  /** The plugins of a consumer, as stored. */
  plugins(consumerId: string): PluginEntity[];
  /** A consumer's id, from its username. */
  consumerId(username: string): string;
  addCredential(consumerId: string, key: string, options?: { id?: string; tags?: string[] | null; ttl?: number }): Credential;
  /** The live credentials of a consumer, as stored (the double's own view, not the API's). */
  credentials(consumerId: string): Credential[];
  close: () => Promise<void>;
}

const RATE_LIMITING_FIELDS = ['second', 'minute', 'hour', 'day', 'month', 'year'];

export async function startKongShapedAdmin(options: { now?: number } = {}): Promise<KongShapedAdmin> {
  let now = options.now ?? 1893456000;
  const consumers: Consumer[] = [];
  const plugins: PluginEntity[] = [];
  let credentials: Credential[] = [];
  // kong/plugins/acl/daos.lua: one row per consumer and group
  const groups = new Map<string, Set<string>>();
  const requests: RecordedRequest[] = [];
  const failures: Array<{ method: string; path: RegExp; status: number }> = [];
  const drops: Array<{ method: string; path: RegExp }> = [];

  const live = () => (credentials = credentials.filter((c) => c.expiresAt === null || c.expiresAt > now));
  const expiry = (ttl: unknown, since: number) => (typeof ttl === 'number' && ttl > 0 ? since + ttl : null);
  const credentialView = ({ expiresAt, ...rest }: Credential) => ({
    ...rest,
    ttl: expiresAt === null ? null : Math.floor(expiresAt - now),
  });
  const findConsumer = (idOrName: string | undefined) => consumers.find((c) => c.id === idOrName || c.username === idOrName);
  const hasTags = (tags: string[] | null, wanted: string[]) => wanted.every((tag) => (tags ?? []).includes(tag));

  const admin: Omit<KongShapedAdmin, 'url' | 'close'> = {
    requests,
    now: () => now,
    advance: (seconds) => void (now += seconds),
    failNext: (method, path, status = 500) => void failures.push({ method, path, status }),
    dropAnswerNext: (method, path) => void drops.push({ method, path }),
    addConsumer(username, tags) {
      const consumer = { id: randomUUID(), created_at: Math.floor(now), updated_at: Math.floor(now), username, custom_id: null, tags };
      consumers.push(consumer);
      return consumer;
    },
    addPlugin(consumerId, { route, tags, config }) {
      const plugin = {
        id: randomUUID(),
        name: 'rate-limiting',
        created_at: Math.floor(now),
        consumer: { id: consumerId },
        route: route ?? null,
        service: null,
        config: { ...Object.fromEntries(RATE_LIMITING_FIELDS.map((field) => [field, null])), limit_by: 'consumer', policy: 'local', ...config },
        tags,
        enabled: true,
      };
      plugins.push(plugin);
      return plugin;
    },
    plugins: (consumerId) => plugins.filter((p) => p.consumer.id === consumerId),
    addCredential(consumerId, key, { id = randomUUID(), tags = null, ttl } = {}) {
      const createdAt = Math.floor(now);
      const credential = { id, created_at: createdAt, consumer: { id: consumerId }, key, tags, expiresAt: expiry(ttl, createdAt) };
      credentials.push(credential);
      return credential;
    },
    consumerId(username) {
      const consumer = findConsumer(username);
      if (!consumer) throw new Error(`no consumer ${username}`);
      return consumer.id;
    },
    credentials: (consumerId) => live().filter((c) => c.consumer.id === consumerId),
  };

  const send = (res: ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const notFound = (res: ServerResponse) => send(res, 404, { message: 'Not found' });
  const page = (res: ServerResponse, data: unknown[]) => send(res, 200, { data, next: null });

  function keyAuth(
    req: IncomingMessage,
    res: ServerResponse,
    consumer: Consumer,
    credentialIdOrKey: string | undefined,
    body: Record<string, unknown>,
  ) {
    live();
    if (credentialIdOrKey === undefined) {
      if (req.method === 'GET') return page(res, admin.credentials(consumer.id).map(credentialView));
      if (req.method !== 'POST') return send(res, 405, { message: 'Method not allowed' });
      const key = typeof body.key === 'string' ? body.key : randomBytes(16).toString('hex');
      if (credentials.some((c) => c.key === key)) {
        const message = `UNIQUE violation detected on '{key="${key}"}'`;
        return send(res, 409, { code: 5, name: 'unique constraint violation', message, fields: { key } });
      }
      const tags = Array.isArray(body.tags) ? (body.tags as string[]) : null;
      // Kong takes an id given on insert
      const id = typeof body.id === 'string' ? body.id : undefined;
      return send(res, 201, credentialView(admin.addCredential(consumer.id, key, { id, tags, ttl: body.ttl as number | undefined })));
    }
    const credential = admin.credentials(consumer.id).find((c) => c.id === credentialIdOrKey || c.key === credentialIdOrKey);
    if (!credential) return notFound(res);
    if (req.method === 'GET') return send(res, 200, credentialView(credential));
    if (req.method === 'PATCH') {
      if ('ttl' in body) credential.expiresAt = expiry(body.ttl, now);
      if (Array.isArray(body.tags)) credential.tags = body.tags as string[];
      return send(res, 200, credentialView(credential));
    }
    if (req.method === 'DELETE') {
      credentials = credentials.filter((c) => c !== credential);
      return send(res, 204);
    }
    return send(res, 405, { message: 'Method not allowed' });
  }

  function createPlugin(res: ServerResponse, consumer: Consumer, body: Record<string, unknown>) {
    const config = Object.fromEntries(RATE_LIMITING_FIELDS.map((field) => [field, null]));
    const plugin = {
      id: typeof body.id === 'string' ? body.id : randomUUID(),
      name: String(body.name),
      created_at: Math.floor(now),
      consumer: { id: consumer.id },
      route: null,
      service: null,
      config: { ...config, limit_by: 'consumer', policy: 'local', ...(body.config as object) },
      tags: (body.tags as string[] | undefined) ?? null,
      enabled: true,
    };
    plugins.push(plugin);
    return send(res, 201, plugin);
  }

  function consumerRoutes(
    req: IncomingMessage,
    res: ServerResponse,
    parts: string[],
    query: URLSearchParams,
    body: Record<string, unknown>,
  ) {
    if (parts.length === 1) {
      if (req.method === 'GET') {
        const wanted = query.get('tags')?.split(',') ?? [];
        return page(res, consumers.filter((c) => hasTags(c.tags, wanted)));
      }
      if (req.method !== 'POST') return send(res, 405, { message: 'Method not allowed' });
      // username and custom_id are unique (kong/db/schema/entities/consumers.lua)
      for (const field of ['username', 'custom_id'] as const) {
        const value = body[field];
        if (value !== undefined && consumers.some((c) => c[field] === value)) {
          const message = `UNIQUE violation detected on '{${field}="${String(value)}"}'`;
          return send(res, 409, { code: 5, name: 'unique constraint violation', message, fields: { [field]: value } });
        }
      }
      const consumer = admin.addConsumer(String(body.username), (body.tags as string[] | undefined) ?? []);
      if (typeof body.id === 'string') consumer.id = body.id;
      consumer.custom_id = (body.custom_id as string | undefined) ?? null;
      return send(res, 201, consumer);
    }
    const consumer = findConsumer(parts[1]);
    // DELETE of a top-level entity that is not there is done (kong/api/endpoints.lua:675-682)
    if (!consumer && parts.length === 2 && req.method === 'DELETE') return send(res, 204);
    if (!consumer) return notFound(res);
    if (parts[2] === 'key-auth') return keyAuth(req, res, consumer, parts[3], body);
    // kong/plugins/acl/api.lua: PUT /consumers/{c}/acls/{group} creates or replaces the membership
    if (parts[2] === 'acls' && parts.length === 4 && req.method === 'PUT') {
      const tags = (body.tags as string[] | undefined) ?? null;
      groups.set(consumer.id, new Set([...(groups.get(consumer.id) ?? []), parts[3]!]));
      return send(res, 200, { id: randomUUID(), consumer: { id: consumer.id }, group: parts[3], created_at: Math.floor(now), tags });
    }
    if (parts[2] === 'acls' && parts.length === 3 && req.method === 'GET') {
      const row = (group: string) => ({ id: randomUUID(), consumer: { id: consumer.id }, group, created_at: Math.floor(now) });
      const rows = [...(groups.get(consumer.id) ?? [])].map(row);
      return page(res, rows);
    }
    if (parts[2] === 'plugins' && req.method === 'GET') return page(res, plugins.filter((p) => p.consumer.id === consumer.id));
    if (parts[2] === 'plugins' && req.method === 'POST') return createPlugin(res, consumer, body);
    if (parts.length !== 2) return notFound(res);
    if (req.method === 'GET') return send(res, 200, consumer);
    if (req.method === 'PATCH') {
      Object.assign(consumer, body, { updated_at: Math.floor(now) });
      return send(res, 200, consumer);
    }
    if (req.method === 'DELETE') {
      consumers.splice(consumers.indexOf(consumer), 1);
      credentials = credentials.filter((c) => c.consumer.id !== consumer.id);
      plugins.splice(0, plugins.length, ...plugins.filter((p) => p.consumer.id !== consumer.id));
      return send(res, 204);
    }
    return send(res, 405, { message: 'Method not allowed' });
  }

  function handle(req: IncomingMessage, res: ServerResponse, text: string) {
    requests.push({ method: req.method!, url: req.url!, body: text });
    const url = new URL(req.url!, 'http://admin');
    const failure = failures.findIndex((f) => f.method === req.method && f.path.test(url.pathname));
    if (failure >= 0) return send(res, failures.splice(failure, 1)[0]!.status, { message: 'injected failure' });
    const drop = drops.findIndex((d) => d.method === req.method && d.path.test(url.pathname));
    if (drop >= 0) {
      drops.splice(drop, 1);
      res.writeHead = () => res;
      res.end = () => (req.socket.destroy(), res);
    }
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (parts[0] === 'consumers') return consumerRoutes(req, res, parts, url.searchParams, body);
    if (parts[0] === 'plugins' && parts.length === 1 && req.method === 'GET') {
      // GET /plugins?tags=a,b: plugins carrying every tag (kong/api/endpoints.lua, tags filter)
      const tags = url.searchParams.get('tags')?.split(',') ?? [];
      return page(res, plugins.filter((p) => tags.every((tag) => p.tags?.includes(tag))));
    }
    const plugin = parts[0] === 'plugins' ? plugins.find((p) => p.id === parts[1]) : undefined;
    if (!plugin && parts[0] === 'plugins' && parts.length === 2 && req.method === 'DELETE') return send(res, 204);
    if (!plugin) return notFound(res);
    if (req.method === 'PATCH') {
      plugin.config = { ...plugin.config, ...(body.config as object) };
      if (Array.isArray(body.tags)) plugin.tags = body.tags as string[];
      return send(res, 200, plugin);
    }
    if (req.method === 'DELETE') {
      plugins.splice(plugins.indexOf(plugin), 1);
      return send(res, 204);
    }
    return send(res, 200, plugin);
  }

  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...admin,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
