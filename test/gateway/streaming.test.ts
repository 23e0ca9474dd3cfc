import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startFixture } from '../helpers/fixture.ts';
import type { EchoUpstream } from '../helpers/gateway.ts';
import { RawConnection } from '../helpers/raw-http.ts';

// Responses stream through the gateway: nothing is held whole in memory unless a plugin asks for it
// (kong.response.get_raw_body). The animal-store edge plugin has a body_filter, so every response
// passes through body_filter, chunk by chunk, as nginx calls it. Request bodies are read whole
// before they are proxied (`proxy_request_buffering on`, kong/templates/nginx_kong.lua, 3.9.3;
// nginx keeps what passes client_body_buffer_size in a temporary file), unless the route says
// request_buffering: false (Kong's unbuffered location).

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function upstreamServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<EchoUpstream> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    last: () => undefined,
    server,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const CONFIG = `
_format_version: "3.0"
services:
  - name: s
    url: \${UPSTREAM}
    routes:
      - { name: r, paths: [/] }
      - { name: streamed, paths: [/streamed], request_buffering: false }
plugins:
  - name: animal-store-edge
    config: { key_header: apikey, realm: test, dict_name: animal_store_edge }
`;

/** An upstream that records the requests it sees start, and the bytes of each body. */
async function recordingUpstream() {
  const started: string[] = [];
  const firstPart = deferred<string>();
  const upstream = await upstreamServer((req, res) => {
    started.push(req.url!);
    let received = '';
    req.on('data', (chunk: Buffer) => {
      if (!received) firstPart.resolve(chunk.toString());
      received += chunk.toString();
    });
    req.on('end', () => res.end(JSON.stringify({ received: received.length })));
  });
  return { upstream, started, firstPart: firstPart.promise };
}

test('a request body is read whole before the upstream sees the request', async (t) => {
  const { upstream, started } = await recordingUpstream();
  const f = await startFixture(CONFIG, { upstream });
  t.teardown(async () => {
    await f.dispose();
    await upstream.close();
  });
  const connection = await RawConnection.open(f.gateway.proxyUrl);
  t.teardown(() => connection.close());
  await connection.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello');
  // A whole request through the same worker after the first half was sent: by its answer the
  // worker has read "hello", and has not proxied /upload.
  t.is((await fetch(`${f.gateway.proxyUrl}/other`)).status, 200);
  t.deepEqual(started, ['/other']);
  await connection.write('world');
  const response = await connection.response();
  t.is(response.status, 200);
  t.deepEqual(JSON.parse(response.body), { received: 10 });
  t.deepEqual(started, ['/other', '/upload']);
});

test('request_buffering: false streams the body to the upstream as it arrives', async (t) => {
  const { upstream, firstPart } = await recordingUpstream();
  const f = await startFixture(CONFIG, { upstream });
  t.teardown(async () => {
    await f.dispose();
    await upstream.close();
  });
  const connection = await RawConnection.open(f.gateway.proxyUrl);
  t.teardown(() => connection.close());
  await connection.write('POST /streamed HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello');
  t.is(await firstPart, 'hello', 'the first half arrived before the second was sent');
  await connection.write('world');
  const response = await connection.response();
  t.is(response.status, 200);
  t.deepEqual(JSON.parse(response.body), { received: 10 });
});

test('a response streams to the client through body_filter, chunk by chunk', async (t) => {
  const clientGotFirst = deferred();
  const upstream = await upstreamServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first,');
    void clientGotFirst.promise.then(() => res.end('second'));
  });
  const f = await startFixture(CONFIG, { upstream });
  t.teardown(async () => {
    await f.dispose();
    await upstream.close();
  });
  const response = await fetch(`${f.gateway.proxyUrl}/download`);
  t.is(response.status, 200);
  const reader = response.body!.getReader();
  const first = await reader.read();
  t.is(Buffer.from(first.value!).toString(), 'first,', 'the first chunk came before the upstream finished');
  clientGotFirst.resolve();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value).toString();
  t.is(rest, 'second');
});

test('a large response passes whole through body_filter without being held (64 MB)', async (t) => {
  const piece = Buffer.alloc(1024 * 1024, 0x61);
  const upstream = await upstreamServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const write = () => {
      while (sent < 64) {
        sent += 1;
        if (!res.write(piece)) return void res.once('drain', write);
      }
      res.end();
    };
    write();
  });
  const f = await startFixture(CONFIG, { upstream });
  t.teardown(async () => {
    await f.dispose();
    await upstream.close();
  });
  const response = await fetch(`${f.gateway.proxyUrl}/big`);
  let bytes = 0;
  for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
  t.is(bytes, 64 * 1024 * 1024);
});
