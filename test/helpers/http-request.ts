import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

/**
 * One HTTP/1.1 request with node:http (fetch cannot set Host, send repeated headers or leave
 * the path as written). Headers may repeat: pass an array value.
 */
export function httpGet(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<HttpResponse> {
  const target = new URL(url);
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  const path = pathStart === -1 ? '/' : url.slice(pathStart);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'GET',
        path,
        headers: options.headers,
        agent: false,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, body, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method ?? 'GET'} ${url} timed out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
