import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminApi } from '../../packages/provisioning/index.ts';
import { planLimitsExposition, readPlanLimits } from './plan-limits.ts';

export interface PlanLimitsExporter {
  /** e.g. http://127.0.0.1:9464; GET /metrics. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the plan limits at GET /metrics, read from the Admin API at each scrape: a plan changed
 * with the CLI is in the next one. When Kong cannot be read it answers 503 (Prometheus's `up` is
 * then 0) rather than an empty page, which would look like consumers without plans.
 */
export async function startPlanLimitsExporter(admin: AdminApi, listen: { host: string; port: number }): Promise<PlanLimitsExporter> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    readPlanLimits(admin).then(
      (limits) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(planLimitsExposition(limits)),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`plan-limits: ${message}\n`);
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end(`cannot read the plans: ${message}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
