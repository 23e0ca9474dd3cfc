import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port picked: clear of the usual fixed ports (PostgreSQL's, Redis', Kong's 8000-8447). */
const LOWEST = 20000;
const TRIES = 20;

/**
 * Where the kernel's ephemeral range starts: connect() takes its local ports there, and so does
 * every listen() on port 0. Undefined off Linux.
 */
function ephemeralStart() {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return undefined;
  }
}

/** Listens on `port` (0: the kernel's pick): the listening server, or undefined when the port is in use. */
function tryPort(host, port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error)));
    // a connection made to a held port is not for us: closed, so that release() is not kept waiting
    server.on('connection', (socket) => socket.destroy());
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * A TCP port free on `host`, held (listened on) until `release()`: for a server another process
 * starts later, held as long as that can be, so that no other pick takes it meanwhile (another
 * freePort's check finds it in use). Drawn as freePort draws.
 *
 * @param {string} [host]
 * @returns {Promise<{ port: number, release(): Promise<void> }>}
 */
export async function reservePort(host = '127.0.0.1') {
  const below = ephemeralStart();
  let server;
  if (below !== undefined && below > LOWEST + 1000) {
    for (let tries = 0; tries < TRIES && server === undefined; tries++) {
      server = await tryPort(host, LOWEST + Math.floor(Math.random() * (below - LOWEST)));
    }
  }
  server ??= await tryPort(host, 0);
  if (server === undefined) throw new Error(`no free port on ${host}`);
  const held = server;
  return { port: held.address().port, release: () => new Promise((resolve) => held.close(() => resolve(undefined))) };
}

/**
 * A TCP port free on `host` now, for a server that must be told its port before it starts
 * (another process binds it later). Picked at random below the ephemeral range rather than by
 * listening on port 0: a port the kernel hands out there may be handed out again, to another
 * server's listen(0) or to an outgoing connection, before its server binds it (two stacks
 * starting side by side lost a portal so). Port 0's pick when the range leaves no room below it.
 *
 * @param {string} [host]
 * @returns {Promise<number>}
 */
export async function freePort(host = '127.0.0.1') {
  const { port, release } = await reservePort(host);
  await release();
  return port;
}
