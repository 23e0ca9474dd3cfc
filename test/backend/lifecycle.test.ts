import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { spawnTs } from '../helpers/process.ts';

const startProcess = (dataDir: string) => spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', DATA_DIR: dataDir });

// One restarted backend for both: it serves the read after the kill -9, then takes the SIGTERM.
test('an acknowledged write survives kill -9 of the backend; SIGTERM lets an in-flight request finish, then exits cleanly', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-kill-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const first = startProcess(dataDir);
  const [, url] = await first.waitFor(/listening on (http:\/\/\S+)/);
  const created = await request(`${url}/pets`, { method: 'POST', json: { name: 'Survivor', categoryId: 7 } });
  t.is(created.status, 201);
  first.child.kill('SIGKILL');
  t.is((await first.exited).signal, 'SIGKILL');

  const backend = startProcess(dataDir);
  t.teardown(() => backend.child.kill('SIGKILL'));
  const [, url2] = await backend.waitFor(/listening on (http:\/\/\S+)/);
  const fetched = await request(`${url2}/pets/${created.body.id}`);
  t.deepEqual(fetched.body, created.body);

  // Expect: 100-continue makes the server confirm it is handling the request before the body is
  // sent: SIGTERM then arrives while the request is in flight.
  const body = JSON.stringify({ name: 'Late', categoryId: 1 });
  const { hostname, port } = new URL(url2!);
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      { hostname, port, path: '/pets', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.on('continue', () => {
      backend.child.kill('SIGTERM');
      void backend.waitFor(/SIGTERM/).then(() => req.end(body));
    });
    req.flushHeaders();
  });

  const { status, text } = await response;
  t.is(status, 201);
  t.is(JSON.parse(text).name, 'Late');
  t.deepEqual(await backend.exited, { code: 0, signal: null });
});

test('a DATABASE_URL that is not PostgreSQL stops the start with one line, without echoing the URL', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-url-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const backend = spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', DATA_DIR: dataDir, DATABASE_URL: 'mysql://store:s3cret@db/animals' });
  t.is((await backend.exited).code, 2);
  t.is(backend.output(), '[backend] DATABASE_URL must be a postgres:// or postgresql:// URL, got one starting "mysql"\n');
});
