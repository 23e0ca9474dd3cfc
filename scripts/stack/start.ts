import type { GatewayReady } from '../../gateway/local/index.ts';
import { readGatewaySettings } from '../../gateway/local/settings.ts';
import { publicOrigin, stackBanner } from './banner.ts';
import { runStack } from './run-stack.ts';

/**
 * `npm start`: the backend, the local gateway (control plane + one data-plane node) and the
 * developer portal, three processes; the portal calls this gateway's Admin and Status APIs, and
 * its links point at the proxy.
 */
await runStack<GatewayReady>({
  name: 'gateway',
  checkSettings: () => void readGatewaySettings(),
  stopping: 'the portal and the gateway',
  builtEntry: 'gateway/local/cmd/start.built.mjs',
  banner: stackBanner,
  portalEnv: (ready) => ({
    KONG_ADMIN_URL: ready.adminUrl,
    KONG_STATUS_URL: ready.statusUrl ?? '',
    // invitation links and the API address the portal shows: https under https_only
    PORTAL_PUBLIC_URL: process.env.PORTAL_PUBLIC_URL ?? publicOrigin(ready),
  }),
});
