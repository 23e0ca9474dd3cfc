import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

// One setting for where rate limits are counted: kong.yml takes DECK_RATE_LIMIT_POLICY and
// DECK_RATE_LIMIT_REDIS_* through decK's env templating, and the CLI's plan plugins copy what
// kong.yml's fallback rate-limiting plugin got. Here kong.yml runs with policy redis on a real
// redis-server, as `npm run start:cluster` and compose run it.
let stack: TestStack;
let redis: RedisServer;

const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';

test.before(async () => {
  redis = await startRedis();
  stack = await startStack({
    env: { DECK_RATE_LIMIT_POLICY: 'redis', DECK_RATE_LIMIT_REDIS_HOST: '127.0.0.1', DECK_RATE_LIMIT_REDIS_PORT: String(redis.port) },
  });
});
test.after.always(async () => {
  await stack?.dispose();
  await redis?.stop();
});

const cli = (args: string[]) =>
  runCliInProcess(args, { KONG_ADMIN_URL: stack.gateway.adminUrl });

test.serial('create: the plan plugin counts in the Redis kong.yml names, and the gateway counts there', async (t) => {
  const created = await cli(['create', '--username', 'shared-alice', '--plan', 'free', '--json']);
  t.is(created.code, 0, created.stderr);
  const { key } = JSON.parse(created.stdout.trim().split('\n').pop()!) as { key: string };

  const [plan] = (await stack.admin('/consumers/shared-alice/plugins')).body.data;
  const [fallback] = (await stack.admin('/plugins?tags=animal-store')).body.data.filter(
    (p: { name: string; consumer: unknown }) => p.name === 'rate-limiting' && p.consumer === null,
  );
  t.is(plan.config.policy, 'redis');
  t.deepEqual(plan.config.redis, fallback.config.redis);
  t.like(plan.config.redis, { host: '127.0.0.1', port: redis.port });
  t.is(plan.config.sync_rate, fallback.config.sync_rate);

  const response = await stack.call('/v1/pets', { key });
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-limit'), '60');
  const consumer = (await stack.admin('/consumers/shared-alice')).body;
  const minuteStart = Math.floor(stack.clock.now() / 60_000) * 60_000;
  t.is(await redis.command('GET', `ratelimit:${EMPTY_UUID}:${EMPTY_UUID}:${consumer.id}:${minuteStart}:minute`), '1');
});

test.serial('plans sync moves plans written for another policy to the gateway\'s', async (t) => {
  // a plan plugin as written before the deployment moved to Redis: policy local
  await stack.provision('shared-bob', { minute: 60, day: 1000 });
  await stack.admin('/consumers/shared-bob', { method: 'PATCH', json: { tags: ['petstore-consumer', 'plan:free'] } });
  t.is((await stack.admin('/consumers/shared-bob/plugins')).body.data[0].config.policy, 'local');
  const synced = await cli(['plans', 'sync', '--plan', 'free']);
  t.is(synced.code, 0, synced.stderr);
  const [plan] = (await stack.admin('/consumers/shared-bob/plugins')).body.data;
  t.is(plan.config.policy, 'redis');
  t.is(plan.config.redis.host, '127.0.0.1');
});
