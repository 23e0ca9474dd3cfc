// rate-limiting's redis policy with sync_rate > 0 (gateway/local/data-plane/lua/kong/plugins/
// rate-limiting/policies/init.lua): a sync takes this worker's pending counts for its Redis and
// leaves a new table for the requests meanwhile; a request's first count of a key is an INCR
// that yields on Redis. Here a sync runs while that INCR is on the wire, for certain: a proxy
// between the node and its redis-server holds the INCR's answer until the sync's own commands
// arrive. The request's adjustment (its INCR counted it; its local count must not count it
// again) has to land in the table the next sync sends, not in the one already sent.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import test from 'ava';
import { startTestNode } from '../../helpers/data-plane.ts';
import { httpGet } from '../../helpers/http-request.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startRedis } from '../../helpers/redis.ts';
import { startUpstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

/** A TCP proxy to Redis that holds the answer to the first INCR of `heldKey` until a sync arrives. */
async function holdingProxy(redisPort: number, heldKey: string) {
  const sent: string[] = [];
  let releaseHeld: (() => void) | undefined;
  let held = false;
  const server = net.createServer((client) => {
    const redis = net.connect(redisPort, '127.0.0.1');
    let holding = false;
    const waiting: Buffer[] = [];
    client.on('data', (data: Buffer) => {
      const text = data.toString('latin1');
      sent.push(text);
      // the policy's scripts, by their source: INCR_SCRIPT names result_incr, SYNC_SCRIPT incrby
      if (!held && text.includes(heldKey) && text.includes('result_incr')) {
        held = holding = true;
        releaseHeld = () => {
          holding = false;
          for (const chunk of waiting.splice(0)) client.write(chunk);
        };
      }
      if (text.includes('"incrby"') && releaseHeld) {
        releaseHeld();
        releaseHeld = undefined;
      }
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
    /** Whether the INCR of `heldKey` was held, and whether it is still. */
    state: () => ({ held, releasing: releaseHeld !== undefined }),
    syncsOf: (key: string) => sent.filter((text) => text.includes('"incrby"') && text.includes(key)).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('a sync during a request\'s first count in Redis: that request is counted once', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startUpstream(mockUpstream);
  t.teardown(() => upstream.close());
  const ids = { a: randomUUID(), b: randomUUID() };
  // limit_by service: the key is ratelimit:<route>:<service>:<service>:<start>:hour
  const keyOf = (service: string) => `:${service}:${service}:`;
  const proxy = await holdingProxy(redis.port, keyOf(ids.b));
  t.teardown(() => proxy.close());
  // both plugins on one Redis: one worker's pending counts for it are one table, whichever plugin's timer syncs it
  const redisConf = { host: '127.0.0.1', port: proxy.port, database: 0 };
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
  const countOf = async (service: string): Promise<number> => {
    const [key] = (await redis.command('KEYS', `*${keyOf(service)}*`)) as string[];
    return key === undefined ? 0 : Number(await redis.command('GET', key));
  };

  // a: its first count by INCR, its second pending; its timer syncs it within 1 s
  for (let i = 0; i < 2; i++) t.is((await httpGet(node.url('/a'))).status, 200);
  // b: its INCR is held until a's sync has taken the pending table and sent it
  const b = httpGet(node.url('/b'));
  await pollUntil('the INCR of b held', async () => proxy.state().held, { timeoutMs: 5000 });
  t.is((await b).status, 200);
  t.false(proxy.state().releasing, 'b was answered after a sync ran');
  await pollUntil('the sync of a', async () => (await countOf(ids.a)) === 2, { timeoutMs: 5000 });

  // a again: read from Redis (the sync forgot it), then a pending count; the next sync sends what is pending
  for (let i = 0; i < 2; i++) t.is((await httpGet(node.url('/a'))).status, 200);
  await pollUntil('the next sync of a', async () => (await countOf(ids.a)) === 4, { timeoutMs: 5000 });
  t.is(await countOf(ids.b), 1, 'one request to b, counted by its INCR only');
  t.is(proxy.syncsOf(keyOf(ids.b)), 0, 'nothing of b was pending');
});
