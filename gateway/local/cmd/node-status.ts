import { request } from 'node:http';
import type { NodeStatusApi } from '../control-plane/api/metrics-route.ts';

/** Bodies larger than this are refused (a /metrics of 10,000 consumers is ~6 MB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A node's Status API on its unix socket (<prefix>/status.sock), for the control plane. */
export function statusSocketClient(socketPath: string, timeoutMs = 10_000): NodeStatusApi {
  return {
    get(path) {
      return new Promise((resolve, reject) => {
        const req = request({ socketPath, path, method: 'GET', timeout: timeoutMs }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) {
              req.destroy(new Error(`${path}: the answer exceeds ${MAX_BODY_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 502, contentType: String(res.headers['content-type'] ?? 'text/plain'), body: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`${path}: no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end();
      });
    },
  };
}
