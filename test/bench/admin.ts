import { CONSUMER_GROUP, generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';

/** One Admin API call of the bench's own gateway; the parsed answer (undefined for 204). */
export async function adminRequest(method: string, url: string, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

/**
 * The bench's consumer, as the provisioning scripts make one: in our group (animal-store-access
 * refuses any other with 403), a hashed key, a plan that never runs out; and a second key whose
 * credential carries scopes, as `add-key --scope` makes one (the request needs pets:read).
 */
export async function provisionBenchConsumer(admin: string): Promise<{ key: string; scopedKey: string; planPluginId: string }> {
  await adminRequest('POST', `${admin}/consumers`, { username: 'bench' });
  await adminRequest('POST', `${admin}/consumers/bench/acls`, { group: CONSUMER_GROUP });
  const key = generateApiKey();
  await adminRequest('POST', `${admin}/consumers/bench/key-auth`, storedCredential(key, []));
  const scopedKey = generateApiKey();
  await adminRequest('POST', `${admin}/consumers/bench/key-auth`, storedCredential(scopedKey, ['scope:pets:read', 'scope:orders:read']));
  const plan = await adminRequest('POST', `${admin}/consumers/bench/plugins`, { name: 'rate-limiting', config: { minute: 1e9, day: 1e10 } });
  return { key, scopedKey, planPluginId: plan.id as string };
}
