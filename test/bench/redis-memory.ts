import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend } from '../../backend/src/index.ts';
import { startCluster } from '../../gateway/local/index.ts';
import { GATEWAY_DIR } from '../../gateway/local/index.ts';
import { digestApiKey, generateApiKey, KEY_HASH_TAG } from '../../packages/provisioning/index.ts';
import { redisCommands, type RespValue } from '../helpers/redis.ts';

/**
 * Redis memory with many consumers (issue 21): the cluster of `npm run start:cluster` (policy
 * redis) with `--consumers` consumers on the free plan (kong.yml's fallback: 60 a minute, 1000 a
 * day), each making one request through the balancer. Kong's rate-limiting writes one counter per
 * limited period and consumer, each expiring with its period (kong/plugins/rate-limiting/
 * policies/init.lua: INCR, then EXPIRE with the period's length), so memory is bounded by the
 * consumers active within a day. Reports the keys, used_memory and its growth per consumer, the
 * keys' TTLs, and with --wait-minute what is left once the minute counters have expired (real
 * time: Redis expires on its own clock).
 *
 *   npx tsx test/bench/redis-memory.ts [--consumers 10000] [--wait-minute] [--json]
 */

export interface RedisMemoryFigures {
  consumers: number;
  keysBefore: number;
  keysAfter: number;
  usedMemoryBefore: number;
  usedMemoryAfter: number;
  /** (after − before) / consumers, bytes. */
  bytesPerConsumer: number;
  /** The largest TTL among minute counters, and among day counters, seconds. */
  maxTtl: { minute: number; day: number };
  /** Keys without a TTL (none expected). */
  keysWithoutTtl: number;
  /** After the minute counters expired (--wait-minute). */
  afterMinute?: { keys: number; usedMemory: number; bytesPerConsumer: number };
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

const info = (reply: RespValue, field: string) => Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(String(reply))?.[1]);

/** kong.yml with `count` consumers appended (keys stored as digests, as the CLI stores them). */
function kongYmlWithConsumers(count: number): { yaml: string; keys: string[] } {
  const keys: string[] = [];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = generateApiKey();
    keys.push(key);
    lines.push(
      `  - username: bench-${i}`,
      `    keyauth_credentials:`,
      `      - key: ${digestApiKey(key)}`,
      `        tags: [${KEY_HASH_TAG}]`,
    );
  }
  const yaml = readFileSync(join(GATEWAY_DIR, 'kong.yml'), 'utf8').replace(/^consumers:\n/m, `consumers:\n${lines.join('\n')}\n`);
  return { yaml, keys };
}

function get(url: string, key: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/pets?limit=1`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every key, by SCAN (which also deletes the expired ones it meets). */
async function scanAll(redis: (...commands: (string | number)[][]) => Promise<RespValue[]>): Promise<string[]> {
  const names: string[] = [];
  let cursor = '0';
  do {
    const [reply] = await redis(['SCAN', cursor, 'COUNT', 5000]);
    const [nextCursor, batch] = reply as [string, string[]];
    names.push(...batch);
    cursor = nextCursor;
  } while (cursor !== '0');
  return names;
}

export async function measureRedisMemory(options: { consumers?: number; waitMinute?: boolean } = {}): Promise<RedisMemoryFigures> {
  const { consumers = 10_000, waitMinute = false } = options;
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-memory-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'backend') });
  const { yaml, keys } = kongYmlWithConsumers(consumers);
  const configFile = join(dir, 'kong.yml');
  writeFileSync(configFile, yaml);
  const loopback = { host: '127.0.0.1', port: 0 };
  progress(`starting the cluster with ${consumers} consumers in kong.yml`);
  const cluster = await startCluster({
    dir: join(dir, 'cluster'),
    configFile,
    pluginsDir: join(GATEWAY_DIR, 'plugins'),
    adminPort: 0,
    balancer: loopback,
    clusterListen: loopback,
    nodes: [loopback, loopback],
    redis: loopback,
    env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.url, DECK_RATE_LIMIT_POLICY: 'redis' },
    node: { workerProcesses: 1, sharedDicts: ['animal_store_edge 10m'], logLevel: 'notice' },
    log: () => undefined,
  });
  const redis = (...commands: (string | number)[][]) => redisCommands(cluster.redis.port, commands);
  try {
    const [before, keysBefore] = await redis(['INFO', 'memory'], ['DBSIZE']);
    progress(`one request per consumer through the balancer`);
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < keys.length) {
          const status = await get(cluster.balancer.url, keys[next++]!, agent);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    agent.destroy();
    if ((statuses.get(200) ?? 0) !== consumers) throw new Error(`not every consumer was served: ${JSON.stringify([...statuses])}`);
    const [after, keysAfter] = await redis(['INFO', 'memory'], ['DBSIZE']);

    // TTLs of every counter (SCAN, then TTL in one pipeline)
    const names = await scanAll(redis);
    const ttls = await redis(...names.map((name) => ['TTL', name]));
    const maxTtl = { minute: 0, day: 0 };
    let keysWithoutTtl = 0;
    names.forEach((name, i) => {
      const ttl = ttls[i] as number;
      if (ttl < 0) keysWithoutTtl += 1;
      const period = name.endsWith(':minute') ? 'minute' : name.endsWith(':day') ? 'day' : undefined;
      if (period) maxTtl[period] = Math.max(maxTtl[period], ttl);
    });

    const usedMemoryBefore = info(before!, 'used_memory');
    const usedMemoryAfter = info(after!, 'used_memory');
    const figures: RedisMemoryFigures = {
      consumers,
      keysBefore: keysBefore as number,
      keysAfter: keysAfter as number,
      usedMemoryBefore,
      usedMemoryAfter,
      bytesPerConsumer: Math.round((usedMemoryAfter - usedMemoryBefore) / consumers),
      maxTtl,
      keysWithoutTtl,
    };
    if (waitMinute) {
      const wait = maxTtl.minute + 2;
      progress(`waiting ${wait} s for the minute counters to expire (Redis' own clock)`);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      // Redis removes expired keys by sampling, and any it touches: a SCAN touches them all
      await scanAll(redis);
      const [later, keysLater] = await redis(['INFO', 'memory'], ['DBSIZE']);
      const usedMemory = info(later!, 'used_memory');
      const bytesPerConsumer = Math.round((usedMemory - usedMemoryBefore) / consumers);
      figures.afterMinute = { keys: keysLater as number, usedMemory, bytesPerConsumer };
    }
    return figures;
  } finally {
    await cluster.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--consumers');
  const figures = await measureRedisMemory({
    consumers: at > 0 ? Number(process.argv[at + 1]) : 10_000,
    waitMinute: process.argv.includes('--wait-minute'),
  });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
  } else {
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;
    console.log(`${figures.consumers} consumers, one request each, policy redis`);
    console.log(`  keys          ${figures.keysBefore} before, ${figures.keysAfter} after (a minute and a day counter each)`);
    const growth = `${figures.bytesPerConsumer} bytes per consumer`;
    console.log(`  used_memory   ${mb(figures.usedMemoryBefore)} before, ${mb(figures.usedMemoryAfter)} after: ${growth}`);
    const { minute, day } = figures.maxTtl;
    console.log(`  TTLs          minute counters ≤ ${minute} s, day counters ≤ ${day} s; ${figures.keysWithoutTtl} keys without a TTL`);
    if (figures.afterMinute) {
      const left = figures.afterMinute;
      console.log(`  a minute on   ${left.keys} keys, ${mb(left.usedMemory)}: ${left.bytesPerConsumer} bytes per consumer until the day ends`);
    }
  }
}
