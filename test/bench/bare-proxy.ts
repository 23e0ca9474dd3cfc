import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * The ceiling of any Node gateway here: node:http in, undici out, the response piped back, no
 * routing, plugins or header handling. Its own process, as the gateways are.
 * UPSTREAM_URL: the backend; strips a leading /v1 as the gateway's route does.
 */
const upstream = new Pool(process.env.UPSTREAM_URL!, { connections: 512 });
const server = createServer((request, response) => {
  upstream
    .request({ method: 'GET', path: request.url!.replace(/^\/v1/, ''), headers: { host: 'backend' } })
    .then(({ statusCode, headers, body }) => {
      const forwarded: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(headers)) if (value !== undefined && name !== 'connection' && name !== 'keep-alive') forwarded[name] = value;
      response.writeHead(statusCode, forwarded);
      body.pipe(response);
    })
    .catch(() => {
      response.statusCode = 502;
      response.end();
    });
});
server.listen(0, '127.0.0.1', () => console.log(`bare proxy ready http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => {
  server.close();
  void upstream.close().then(() => process.exit(0));
});
