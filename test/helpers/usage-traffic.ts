import { runCliInProcess } from './cli.ts';
import { pollUntil } from './poll.ts';
import { startStack, type TestStack } from './stack.ts';

// The real gateway (gateway/kong.yml on a data-plane node, its Status API on a loopback port)
// with the consumers `consumers usage` reports on, provisioned by the CLI, and one round of
// every kind of request usage counts, sent for real: what the usage tests and the dashboard test
// make Kong count.

/** What one round sends, per consumer and class (usage's columns). */
export const ROUND = {
  alice: { '2xx': 7, '4xx': 2, '429': 3 },
  // bob's plan allows 4 a minute; his 21st 429 bans the key, then 5 requests are refused banned
  bob: { '2xx': 4, '429': 21, banned: 5 },
  // keyless requests, and ask_ keys with a wrong checksum (refused before any look-up): both
  // become kong.yml's anonymous consumer, answered 401
  'animal-store-anonymous': { '4xx': 8 },
} as const;
const ROUND_CHECKSUM_FAILURES = 2;
/** Every request of a round, each counted once in kong_http_requests_total. */
const ROUND_REQUESTS = Object.values(ROUND).reduce((sum, classes) => sum + Object.values(classes).reduce((n, count) => n + count, 0), 0);

/** The node's kong_http_requests_total, summed: what its workers have synced to the shared dict. */
async function requestsCounted(statusUrl: string): Promise<number> {
  const metrics = await (await fetch(`${statusUrl}/metrics`)).text();
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('kong_http_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

export interface UsageGateway {
  stack: TestStack;
  /** host:port of the node's Status API, what Prometheus scrapes. */
  target: string;
  statusUrl: string;
  adminUrl: string;
  /**
   * Sends one round of ROUND (after moving the gateway's clock 15 min on: fresh windows, no ban),
   * and resolves once the node's /metrics counts it.
   */
  round(): Promise<void>;
  dispose(): Promise<void>;
}

/** `consumers create`: the plan's tag and plugin, and a key (stored hashed) as the CLI makes them. */
async function create(stack: TestStack, username: string, minute: number): Promise<string> {
  const created = await runCliInProcess(['create', '--username', username, '--plan', 'enterprise', '--minute', String(minute), '--day', '100000', '--json'], {
    KONG_ADMIN_URL: stack.gateway.adminUrl,
  });
  if (created.code !== 0) throw new Error(`consumers create ${username}: ${created.stderr}`);
  return (JSON.parse(created.stdout) as { key: string }).key;
}

/**
 * The gateway and its consumers: alice (enterprise, 9 a minute) and bob (enterprise, 4 a
 * minute), with keys from `consumers create`. `upstreamUrl` replaces the backend (the dashboard
 * test's upstream takes a set time per route); GET /v1/pets/<petId> is bob's route, the
 * deprecated animal-store-v1-get-pet.
 */
export async function startUsageGateway(options: { upstreamUrl?: string; petId?: number } = {}): Promise<UsageGateway> {
  const stack = await startStack({ upstreamUrl: options.upstreamUrl, node: { statusListen: '127.0.0.1:0' } });
  try {
    const adminUrl = stack.gateway.adminUrl;
    const alice = await create(stack, 'alice', 9);
    const bob = await create(stack, 'bob', 4);
    let petId = options.petId;
    if (petId === undefined) {
      const pet = await fetch(`${stack.backend.url}/pets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      });
      if (pet.status !== 201) throw new Error(`creating a pet: ${pet.status} ${await pet.text()}`);
      petId = ((await pet.json()) as { id: number }).id;
    }
    const statusUrl = stack.gateway.statusUrl!;
    let sent = 0;
    const send = async (expected: number, n: number, path: string, authorization?: string) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${stack.gateway.proxyUrl}${path}`, { headers: authorization ? { authorization } : {} });
        await res.arrayBuffer();
        if (res.status !== expected) throw new Error(`GET ${path} (${authorization ?? 'no key'}): ${res.status}, expected ${expected}`);
      }
    };
    return {
      stack,
      target: new URL(statusUrl).host,
      statusUrl,
      adminUrl,
      async round() {
        await stack.clock.advance(15 * 60_000 + 1000);
        await send(200, ROUND.alice['2xx'], '/v1/pets', `Bearer ${alice}`);
        await send(404, ROUND.alice['4xx'], '/v1/no-such-thing', `Bearer ${alice}`);
        await send(429, ROUND.alice['429'], '/v1/pets', `Bearer ${alice}`);
        await send(200, ROUND.bob['2xx'], `/v1/pets/${petId}`, `Bearer ${bob}`);
        await send(429, ROUND.bob['429'], `/v1/pets/${petId}`, `Bearer ${bob}`);
        await send(429, ROUND.bob.banned, `/v1/pets/${petId}`, `Bearer ${bob}`);
        await send(401, ROUND['animal-store-anonymous']['4xx'] - ROUND_CHECKSUM_FAILURES, '/v1/pets');
        await send(401, ROUND_CHECKSUM_FAILURES, '/v1/pets', `Bearer ask_${'A'.repeat(49)}`);
        // Each worker syncs its counts to the shared dict every second, as Kong's prometheus
        // plugin does: a scrape right after the requests, on a busy machine, could miss them.
        sent += ROUND_REQUESTS;
        await pollUntil('the node to count the round', async () => (await requestsCounted(statusUrl)) >= sent);
      },
      dispose: () => stack.dispose(),
    };
  } catch (error) {
    await stack.dispose();
    throw error;
  }
}
