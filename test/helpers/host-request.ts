import { request as httpRequest } from 'node:http';
import type { JsonResponse } from './backend.ts';

/**
 * `request` (test/helpers/backend.ts) with a Host header of our choosing: fetch sets Host from
 * the URL, and a gateway shared with other teams routes by host. node:http sends it as given.
 */
export function requestWithHost(url: string, host: string, init: RequestInit & { json?: unknown } = {}): Promise<JsonResponse> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const body = json !== undefined ? JSON.stringify(json) : typeof rest.body === 'string' ? rest.body : rest.body == null ? undefined : Buffer.from(rest.body as Uint8Array);
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: rest.method ?? 'GET', headers: { ...Object.fromEntries(headers), host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, item);
          }
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text so the assertion shows it
          }
          resolve({ status: res.statusCode!, headers: responseHeaders, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
