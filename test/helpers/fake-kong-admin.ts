import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A Kong 3.9 Admin API holding consumers and their plan plugins in memory, answering the reads the
// usage and show commands make with Kong's shapes (every field, unset ones null; pages with
// `next`/`offset`). The local gateway cannot run a rate-limiting plugin with policy redis, and Kong
// cannot run here: this is how the CLI meets such a plugin. test/scripts/usage-show.test.ts checks
// its answers against Kong's official OpenAPI.

interface FakeConsumer {
  id: string;
  username: string;
  custom_id: string | null;
  tags: string[] | null;
  created_at: number;
  updated_at: number;
}

interface FakePlugin {
  id: string;
  name: string;
  instance_name: string | null;
  created_at: number;
  updated_at: number;
  route: { id: string } | null;
  service: { id: string } | null;
  consumer: { id: string } | null;
  config: Record<string, unknown>;
  protocols: string[];
  enabled: boolean;
  tags: string[] | null;
}

export interface FakeKongAdmin {
  url: string;
  consumers: FakeConsumer[];
  plugins: FakePlugin[];
  /** Every request, `METHOD path?query`. */
  requests: string[];
  addConsumer(username: string, options?: { tags?: string[]; plan?: PlanConfig | null }): FakeConsumer;
  close(): Promise<void>;
}

interface RateLimitingConfig {
  second: number | null;
  minute: number | null;
  hour: number | null;
  day: number | null;
  month: number | null;
  year: number | null;
  limit_by: string;
  header_name: string | null;
  path: string | null;
  policy: string;
  fault_tolerant: boolean;
  redis: {
    host: string | null;
    port: number;
    timeout: number;
    username: string | null;
    password: string | null;
    database: number;
    ssl: boolean;
    ssl_verify: boolean;
    server_name: string | null;
  };
  hide_client_headers: boolean;
  error_code: number;
  error_message: string;
  sync_rate: number;
}

/** What a test sets of a plan plugin's config; the rest is Kong's defaults. */
type PlanConfig = Partial<Omit<RateLimitingConfig, 'redis'>> & { redis?: Partial<RateLimitingConfig['redis']> };

/** rate-limiting's config as Kong 3.9 stores it: every field of its schema, defaults filled. */
function rateLimitingConfig(config: PlanConfig): RateLimitingConfig {
  return {
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
    hide_client_headers: false,
    error_code: 429,
    error_message: 'API rate limit exceeded',
    sync_rate: -1,
    ...config,
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
      ...config.redis,
    },
  };
}

const NOT_FOUND = { message: 'Not found' };

export async function startFakeKongAdmin(): Promise<FakeKongAdmin> {
  const now = Math.floor(Date.now() / 1000);
  const admin: Omit<FakeKongAdmin, 'url' | 'close'> = {
    consumers: [],
    plugins: [],
    requests: [],
    addConsumer(username, { tags = ['petstore-consumer', 'plan:free'], plan = { minute: 60, day: 1000 } } = {}) {
      const consumer: FakeConsumer = { id: randomUUID(), username, custom_id: null, tags, created_at: now, updated_at: now };
      admin.consumers.push(consumer);
      if (plan) {
        admin.plugins.push({
          id: randomUUID(),
          name: 'rate-limiting',
          instance_name: null,
          created_at: now,
          updated_at: now,
          route: null,
          service: null,
          consumer: { id: consumer.id },
          config: rateLimitingConfig(plan) as unknown as Record<string, unknown>,
          protocols: ['grpc', 'grpcs', 'http', 'https'],
          enabled: true,
          // the library's plan tags; kong.yml's entities carry its select tag (decK adds it)
          tags: tags?.filter((tag) => tag === 'petstore-consumer' || tag === 'animal-store' || tag.startsWith('plan:')) ?? null,
        });
      }
      return consumer;
    },
  };
  const find = (idOrName: string) => admin.consumers.find((c) => c.id === idOrName || c.username === idOrName);
  /** Kong's tags filter: `a,b` all of them, `a/b` any of them. */
  const tagged = (tags: string[] | null, filter: string | null) => {
    if (!filter) return true;
    const have = tags ?? [];
    return filter.includes('/') ? filter.split('/').some((t) => have.includes(t)) : filter.split(',').every((t) => have.includes(t));
  };
  /** One page of `items` as Kong's Admin API pages them. */
  const page = <T>(items: T[], query: URLSearchParams, path: string) => {
    const size = Number(query.get('size') ?? 100);
    const start = Number(query.get('offset') ?? 0);
    const data = items.slice(start, start + size);
    const more = start + size < items.length;
    return more ? { data, next: `${path}?offset=${start + size}&size=${size}`, offset: String(start + size) } : { data, next: null };
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://admin');
    admin.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method !== 'GET') return send(405, { message: 'Method not allowed' });
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const tags = url.searchParams.get('tags');
    if (parts[0] === 'consumers' && parts.length === 1) {
      return send(200, page(admin.consumers.filter((c) => tagged(c.tags, tags)), url.searchParams, '/consumers'));
    }
    if (parts[0] === 'plugins' && parts.length === 1) {
      return send(200, page(admin.plugins.filter((p) => tagged(p.tags, tags)), url.searchParams, '/plugins'));
    }
    if (parts[0] === 'consumers' && parts.length >= 2) {
      const consumer = find(parts[1]!);
      if (!consumer) return send(404, NOT_FOUND);
      if (parts.length === 2) return send(200, consumer);
      if (parts[2] === 'plugins' && parts.length === 3) {
        return send(200, page(admin.plugins.filter((p) => p.consumer?.id === consumer.id), url.searchParams, `/consumers/${consumer.id}/plugins`));
      }
      if (parts[2] === 'key-auth' && parts.length === 3) return send(200, { data: [], next: null });
    }
    return send(404, NOT_FOUND);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(admin, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
