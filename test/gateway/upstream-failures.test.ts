import { createServer } from 'node:net';
import test from 'ava';
import { startEchoUpstream } from '../helpers/gateway.ts';
import { startFixture } from '../helpers/fixture.ts';

// Upstream failures as Kong reports them (kong/error_handlers.lua BODIES; nginx 502/504).

test('a refused connection answers 502 with Kong\'s message after the retries', async (t) => {
  const server = createServer();
  let connections = 0;
  server.on('connection', (socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const f = await startFixture(`
_format_version: "3.0"
services:
  - name: flaky
    url: http://127.0.0.1:${port}
    retries: 2
    routes: [{ name: r, paths: [/] }]
`);
  t.teardown(async () => {
    await f.dispose();
    server.close();
  });
  const response = await f.call('/x');
  t.is(response.status, 502);
  t.is(response.body.message, 'An invalid response was received from the upstream server');
  t.is(connections, 3, 'one try plus retries=2 for an idempotent request');
});

test('a slow upstream answers 504 after read_timeout', async (t) => {
  const slow = await startEchoUpstream();
  slow.server.removeAllListeners('request');
  slow.server.on('request', () => {
    // never answers
  });
  const f = await startFixture(
    `
_format_version: "3.0"
services:
  - name: slow
    url: \${UPSTREAM}
    read_timeout: 150
    retries: 0
    routes: [{ name: r, paths: [/] }]
`,
    { upstream: slow },
  );
  t.teardown(async () => {
    await f.dispose();
    slow.server.closeAllConnections();
    await slow.close();
  });
  const response = await f.call('/x');
  t.is(response.status, 504);
  t.is(response.body.message, 'The upstream server is timing out');
});

test('an unknown host answers 503 "name resolution failed"', async (t) => {
  const f = await startFixture(`
_format_version: "3.0"
services:
  - name: nowhere
    url: http://no-such-host.invalid:80
    routes: [{ name: r, paths: [/] }]
`);
  t.teardown(() => f.dispose());
  const response = await f.call('/x');
  t.is(response.status, 503);
  t.is(response.body.message, 'name resolution failed');
});
