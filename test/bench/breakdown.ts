import { adminRequest } from './admin.ts';
import { progress } from './load.ts';
import { wrk, type WrkResult } from './wrk.ts';

/**
 * Where the full chain's CPU goes, plugin by plugin: the gateway of the run, its kong.yml chain
 * measured whole and then without each plugin in turn (disabled through the Admin API, which
 * answers once the node runs the change), the same request answered 200 every time. A plugin's
 * cost is the node's CPU per request (nginx master and workers, /proc) with it minus without it:
 * its handlers, and what it makes nginx do (headers, a body buffered, shared-dict locks).
 *
 * Removing a plugin must not change the path the request takes:
 * - without the edge plugin, the request carries key-auth's header (the key's digest, what the
 *   edge plugin would have put there) instead of Authorization;
 * - without key-auth there is no consumer: animal-store-access, which would refuse that, goes
 *   too, and kong.yml's fallback rate-limiting (60 a minute), which would answer 429, gets the
 *   bench plan's limits for that measurement;
 * - without rate-limiting, the services' instances and the consumer's plan are both off.
 */
interface BreakdownRow {
  piece: string;
  /** CPU µs per request. */
  micros: number;
  note?: string;
}

export interface BreakdownResult {
  rows: BreakdownRow[];
  /** Each configuration measured: the least CPU per request of its rounds, req/s over all of them. */
  variants: Array<{ name: string; rps: number; cpuMicrosPerRequest: number }>;
  /** 1 - req/s with prometheus / without it, as a percentage (issue 24: at most 10). */
  prometheusThroughputCostPercent: number;
  /** CPU µs per request, the chain with a scoped key minus with a key without scopes (issue 31: at most 1). */
  scopedKeyMicros: number;
}

interface Plugin {
  id: string;
  name: string;
  config: Record<string, unknown>;
  route: unknown;
  service: unknown;
  consumer: unknown;
}

interface Variant {
  name: string;
  /** The plugin left out; undefined for the whole chain. */
  without?: string;
  headers: Record<string, string>;
  apply(): Promise<void>;
  restore(): Promise<void>;
}

export interface BreakdownOptions {
  admin: string;
  url: string;
  bearer: Record<string, string>;
  /** The same consumer's key whose credential carries scope tags (pets:read: the request needs it). */
  scopedBearer: Record<string, string>;
  apikey: Record<string, string>;
  planPluginId: string;
  nginxPid: number;
  durationSeconds: number;
  rounds: number;
  /** From the run's side-by-side rounds: the chain, the route without plugins, plain nginx. */
  chainCpu: number;
  noPluginsCpu: number;
  nginxCpu: number;
  /** nginx with the node's *_by_lua hooks present and empty. */
  luaFloorCpu: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export async function measureBreakdown(options: BreakdownOptions): Promise<BreakdownResult> {
  const { admin, url, bearer, scopedBearer, apikey, planPluginId, nginxPid, durationSeconds, rounds } = options;
  const page = (await adminRequest('GET', `${admin}/plugins?size=1000`)) as { data: Plugin[] };
  // kong.yml's plugins are on our services (a list per service) and prometheus is the platform
  // file's global one: a piece is every instance of a plugin that is not a consumer's
  const instances = (name: string) => {
    const found = page.data.filter((p) => p.name === name && !p.consumer);
    if (found.length === 0) throw new Error(`the bench's gateway runs no ${name} plugin`);
    return found;
  };
  const setEnabled = (id: string, enabled: boolean) => adminRequest('PATCH', `${admin}/plugins/${id}`, { enabled });
  const disabling = (name: string, headers = bearer, ...more: string[]): Variant => ({
    name: `without ${name}`,
    without: name,
    headers,
    apply: async () => {
      for (const id of [...instances(name).map((p) => p.id), ...more]) await setEnabled(id, false);
    },
    restore: async () => {
      for (const id of [...instances(name).map((p) => p.id), ...more]) await setEnabled(id, true);
    },
  });
  const fallbackLimits = instances('rate-limiting');
  const variants: Variant[] = [
    { name: 'full chain', headers: bearer, apply: async () => undefined, restore: async () => undefined },
    disabling('animal-store-edge', apikey),
    disabling('animal-store-body-limit'),
    disabling('prometheus'),
    {
      // animal-store-access refuses a request without a consumer: it goes with key-auth
      ...disabling('key-auth'),
      name: 'without key-auth and animal-store-access',
      without: 'key-auth + animal-store-access',
      apply: async () => {
        for (const p of [...instances('key-auth'), ...instances('animal-store-access')]) await setEnabled(p.id, false);
        // each period's limit at least the shorter one's (rate-limiting's schema): hour too where set
        for (const p of fallbackLimits) {
          const hour = (p.config as { hour?: number | null }).hour == null ? {} : { hour: 1e9 };
          await adminRequest('PATCH', `${admin}/plugins/${p.id}`, { config: { ...p.config, minute: 1e9, ...hour, day: 1e10 } });
        }
      },
      restore: async () => {
        for (const p of fallbackLimits) await adminRequest('PATCH', `${admin}/plugins/${p.id}`, { config: p.config });
        for (const p of [...instances('key-auth'), ...instances('animal-store-access')]) await setEnabled(p.id, true);
      },
    },
    disabling('rate-limiting', bearer, planPluginId),
    // the whole chain again, the key's credential carrying scopes: animal-store-access checks them
    { name: 'full chain, a scoped key', headers: scopedBearer, apply: async () => undefined, restore: async () => undefined },
  ];

  const results: WrkResult[][] = variants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, variant] of variants.entries()) {
      await variant.apply();
      try {
        const name = `breakdown: ${variant.name} (round ${round + 1} of ${rounds})`;
        await wrk({ name: `${name}, warm-up`, url, headers: variant.headers, durationSeconds: 1 });
        const result = await wrk({ name, url, headers: variant.headers, durationSeconds, cpuOf: [nginxPid] });
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} answers other than 2xx: not the chain's path`);
        results[i]!.push(result);
      } finally {
        await variant.restore();
      }
    }
  }

  const measured = variants.map((variant, i) => {
    const runs = results[i]!;
    const requests = runs.reduce((sum, r) => sum + r.requests, 0);
    const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
    // on a shared machine other work only ever adds to a round: the least is the steadiest
    const cpuMicrosPerRequest = Math.min(...runs.map((r) => r.cpuMicrosPerRequest!));
    return { name: variant.name, rps: Math.round(requests / seconds), cpuMicrosPerRequest };
  });
  const whole = measured[0]!;
  const rows: BreakdownRow[] = [
    { piece: 'nginx as a plain proxy (same workers)', micros: options.nginxCpu },
    { piece: "ngx_lua's hooks, empty: entering Lua in 6 phases", micros: round1(options.luaFloorCpu - options.nginxCpu) },
    { piece: "Kong's runloop in them: route without plugins - empty hooks", micros: round1(options.noPluginsCpu - options.luaFloorCpu) },
  ];
  let plugins = 0;
  for (const [i, variant] of variants.entries()) {
    if (!variant.without) continue;
    const micros = round1(whole.cpuMicrosPerRequest - measured[i]!.cpuMicrosPerRequest);
    plugins += micros;
    rows.push({ piece: `plugin ${variant.without}`, micros });
  }
  rows.push({
    piece: 'the rest: iterating the chain, headers the plugins make Kong send',
    micros: round1(whole.cpuMicrosPerRequest - options.noPluginsCpu - plugins),
    note: 'chain (this phase) - route without plugins - the plugins above',
  });
  rows.push({ piece: 'full chain (this phase, least of its rounds)', micros: whole.cpuMicrosPerRequest, note: `${options.chainCpu} in the side-by-side rounds` });
  const scoped = measured[variants.findIndex((v) => v.headers === scopedBearer)]!;
  const scopedKeyMicros = round1(scoped.cpuMicrosPerRequest - whole.cpuMicrosPerRequest);
  rows.push({ piece: 'a scoped key instead: the scope check', micros: scopedKeyMicros, note: 'chain with a scoped key - chain with a key without scopes' });
  const withoutPrometheus = measured[variants.findIndex((v) => v.without === 'prometheus')]!;
  const prometheusThroughputCostPercent = round1((1 - whole.rps / withoutPrometheus.rps) * 100);
  progress(`breakdown: ${rows.map((r) => `${r.piece} ${r.micros}`).join('; ')}`);
  return { rows, variants: measured, prometheusThroughputCostPercent, scopedKeyMicros };
}
