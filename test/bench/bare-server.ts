import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The ceiling: node:http answering a fixed JSON body, no framework, no database. */
export async function startBareJsonServer(body: unknown): Promise<{ url: string; server: Server }> {
  const payload = Buffer.from(JSON.stringify(body));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length });
    response.end(payload);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
