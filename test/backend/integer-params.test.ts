import test from 'ava';
import { request, startTestBackend } from '../helpers/backend.ts';

// The contract types ids and limit as JSON Schema integers, which admit 22.0 (a zero fraction);
// Schemathesis sends such values as valid data and expects them accepted.
test('integer parameters accept a zero fraction, and nothing else that is not digits', async (t) => {
  const backend = await startTestBackend();
  t.teardown(() => backend.dispose());
  const created = await request(`${backend.url}/pets`, { method: 'POST', json: { name: 'Rex', categoryId: 1 } });
  const id = created.body.id as number;
  t.deepEqual((await request(`${backend.url}/pets/${id}.0`)).body, created.body);
  t.deepEqual((await request(`${backend.url}/pets/${id}.000`)).body, created.body);
  t.is((await request(`${backend.url}/pets?limit=1.0`)).status, 200);
  for (const bad of [`${id}.5`, `${id}.`, `.0`, `${id}e0`, `0x${id}`, `${id}.0.0`]) {
    const response = await request(`${backend.url}/pets/${bad}`);
    t.is(response.status, 400, bad);
    t.is(response.body.code, 'validation_failed');
  }
  t.is((await request(`${backend.url}/pets?limit=2.5`)).status, 400);
});
