import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import test from 'ava';
import { freePort, reservePort } from '../../packages/node-runtime/free-port.js';

const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number];

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

test("freePort picks a port below the kernel's ephemeral range, where listen(0) does not go, and it can be bound", async (t) => {
  const kernelPick = await listen(0);
  t.teardown(() => kernelPick.close());
  t.true((kernelPick.address() as AddressInfo).port >= ephemeralStart, 'listen(0) draws from the ephemeral range');

  for (let i = 0; i < 10; i++) {
    const port = await freePort();
    t.true(port >= 20000 && port < ephemeralStart, `${port}`);
    const server = await listen(port);
    await new Promise((resolve) => server.close(resolve));
  }
});

test('reservePort holds its port until release(): a listen there fails meanwhile, a connection is closed, then it can be bound', async (t) => {
  const reserved = await reservePort();
  t.true(reserved.port >= 20000 && reserved.port < ephemeralStart);
  await t.throwsAsync(listen(reserved.port), { code: 'EADDRINUSE' });
  const socket = connect(reserved.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('close', resolve));
  await reserved.release();
  const server = await listen(reserved.port);
  await new Promise((resolve) => server.close(resolve));
});
