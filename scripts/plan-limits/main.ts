// `npm run plan-limits`: the plan-limits exporter (docs/alerts.md). Environment:
//   KONG_ADMIN_URL       the Admin API (default http://127.0.0.1:8001, as the consumers CLI)
//   PLAN_LIMITS_LISTEN   host:port to serve /metrics on (default 127.0.0.1:9464)
import { AdminApi } from '../../packages/provisioning/index.ts';
import { startPlanLimitsExporter } from './server.ts';

function listenAddress(value: string): { host: string; port: number } {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new Error(`PLAN_LIMITS_LISTEN must be host:port, got ${value}`);
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

try {
  const admin = AdminApi.connect({ url: process.env.KONG_ADMIN_URL ?? 'http://127.0.0.1:8001' });
  const exporter = await startPlanLimitsExporter(admin, listenAddress(process.env.PLAN_LIMITS_LISTEN ?? '127.0.0.1:9464'));
  process.stdout.write(`plan-limits: serving ${exporter.url}/metrics\n`);
  const stop = () => void exporter.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  process.stderr.write(`plan-limits: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
