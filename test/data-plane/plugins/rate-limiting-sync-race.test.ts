// rate-limiting's redis policy with sync_rate > 0 (gateway/local/data-plane/lua/kong/plugins/
// rate-limiting/policies/init.lua): a sync takes this worker's pending counts for its Redis and
// leaves a new table for the requests meanwhile; a request's first count of a key is an INCR.
// Both wait on Redis, and other requests run meanwhile. A proxy between the node and its
// redis-server holds one answer until the test lets it go, so that the overlap happens for
// certain. Every request must be counted once: Kong 3.9.3 clears the pending table once the
// sync's commit returns (policies/init.lua:177-216), so what was counted while it waited is lost
// there (docs/known-differences.md).
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet } from '../../helpers/http-request.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startRedis, type RedisServer } from '../../helpers/redis.ts';
import { startUpstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

// the policy's scripts, told apart by their source: INCR_SCRIPT names result_incr, SYNC_SCRIPT incrby
const isIncr = (text: string) => text.includes('result_incr');
const isSync = (text: string) => text.includes('"incrby"');

interface Hold {
  /** Resolves once a command matched and its answer is being held. */
  matched: Promise<void>;
  release(): void;
}

/** A TCP proxy to Redis that can hold the answer to the next command matching a test. */
async function holdingProxy(redisPort: number) {
  const sent: string[] = [];
  const watchers = new Set<(text: string, hold: () => () => void) => void>();
  const server = net.createServer((client) => {
    const redis = net.connect(redisPort, '127.0.0.1');
    let holding = false;
    const waiting: Buffer[] = [];
    const hold = () => {
      holding = true;
      return () => {
        holding = false;
        for (const chunk of waiting.splice(0)) client.write(chunk);
      };
    };
    client.on('data', (data: Buffer) => {
      const text = data.toString('latin1');
      sent.push(text);
      for (const watcher of [...watchers]) watcher(text, hold);
      redis.write(data);
    });
    redis.on('data', (data: Buffer) => (holding ? waiting.push(data) : client.write(data)));
    client.on('error', () => redis.destroy());
    redis.on('error', () => client.destroy());
    client.on('close', () => redis.destroy());
    redis.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    holdNext(matches: (text: string) => boolean): Hold {
      let release: (() => void) | undefined;
      let matched!: () => void;
      const watcher = (text: string, hold: () => () => void) => {
        if (!matches(text)) return;
        watchers.delete(watcher);
        release = hold();
        matched();
      };
      watchers.add(watcher);
      return { matched: new Promise<void>((resolve) => (matched = resolve)), release: () => release?.() };
    },
    /** Resolves when the next command matching arrives (it is passed on). */
    next(matches: (text: string) => boolean): Promise<void> {
      return new Promise((resolve) => {
        const watcher = (text: string) => {
          if (!matches(text)) return;
          watchers.delete(watcher);
          resolve();
        };
        watchers.add(watcher);
      });
    },
    syncsOf: (key = '') => sent.filter((text) => isSync(text) && text.includes(key)).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// limit_by service: the key is ratelimit:<route>:<service>:<service>:<start>:hour
const keyOf = (service: string) => `:${service}:${service}:`;

/** A node with services a and b, rate-limiting with sync_rate 1 on each, both counting in one Redis through the proxy. */
async function setUp(t: ExecutionContext) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startUpstream(mockUpstream);
  t.teardown(() => upstream.close());
  const proxy = await holdingProxy(redis.port);
  t.teardown(() => proxy.close());
  const ids = { a: randomUUID(), b: randomUUID() };
  // A held answer must not time out (redis.timeout, 2 s by default): an INCR that timed out was
  // still run by Redis, and the request is counted again locally, as Kong counts it; a loaded
  // machine can take longer than 2 s to run the sync the test waits for.
  const redisConf = { host: '127.0.0.1', port: proxy.port, database: 0, timeout: 30_000 };
  const node = await startTestNode({
    plugins: BUNDLED_PLUGINS,
    snapshot: {
      services: [
        { id: ids.a, name: 'a', url: `${upstream.url}/always_200` },
        { id: ids.b, name: 'b', url: `${upstream.url}/always_200` },
      ],
      routes: [{ service: 'a', paths: ['/a'] }, { service: 'b', paths: ['/b'] }],
      plugins: ['a', 'b'].map((service) =>
        plugin('rate-limiting', { service }, { hour: 1000, limit_by: 'service', policy: 'redis', sync_rate: 1, redis: redisConf }),
      ),
    },
  });
  t.teardown(() => node.dispose());
  return { redis, proxy, node, ids };
}

async function countOf(redis: RedisServer, service: string): Promise<number> {
  const [key] = (await redis.command('KEYS', `*${keyOf(service)}*`)) as string[];
  return key === undefined ? 0 : Number(await redis.command('GET', key));
}

async function ok(node: TestNode, path: string): Promise<void> {
  const res = await httpGet(node.url(path));
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
}

/** Two requests to a: the first counted by its INCR, the second pending; a's timer syncs it within 1 s. */
const twoToA = async (node: TestNode) => {
  await ok(node, '/a');
  await ok(node, '/a');
};

test('a sync during a request\'s first count in Redis: that request is counted once', async (t) => {
  const { redis, proxy, node, ids } = await setUp(t);
  await twoToA(node);
  // b's INCR is answered only once a's sync has taken the pending table and sent it
  const incr = proxy.holdNext((text) => isIncr(text) && text.includes(keyOf(ids.b)));
  const b = ok(node, '/b');
  await incr.matched;
  if (proxy.syncsOf() > 0) {
    incr.release();
    t.fail('a synced before b\'s INCR was sent: nothing overlapped (a\'s sync comes 1 s after its first request)');
    return;
  }
  await proxy.next(isSync);
  incr.release();
  await b;
  await pollUntil('the sync of a', async () => (await countOf(redis, ids.a)) === 2, { timeoutMs: 5000 });

  // a again: read from Redis (the sync forgot it), then a pending count; the next sync sends what is pending
  await twoToA(node);
  await pollUntil('the next sync of a', async () => (await countOf(redis, ids.a)) === 4, { timeoutMs: 5000 });
  t.is(await countOf(redis, ids.b), 1, 'one request to b, counted by its INCR only');
  t.is(proxy.syncsOf(keyOf(ids.b)), 0, 'nothing of b was pending');
});

test('a request counted while a sync waits on Redis is sent by the next sync (Kong loses it)', async (t) => {
  const { redis, proxy, node, ids } = await setUp(t);
  await twoToA(node);
  // a's sync waits for its answer; meanwhile a third request to a is counted
  const sync = proxy.holdNext(isSync);
  await sync.matched;
  await ok(node, '/a');
  sync.release();
  await pollUntil('the sync of a', async () => (await countOf(redis, ids.a)) === 2, { timeoutMs: 5000 });
  await pollUntil('the next sync of a, with the request counted meanwhile', async () => (await countOf(redis, ids.a)) === 3, { timeoutMs: 5000 });
  t.is(proxy.syncsOf(keyOf(ids.a)), 2);
});
