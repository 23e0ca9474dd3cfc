import { join } from 'node:path';
import { GATEWAY_DIR } from '../../gateway/local/settings.ts';

// The gateway's files the tests start it with, apart from ./gateway.ts, which imports the whole
// gateway: a test that only names them (the data plane's) does not load the control plane.
export const KONG_YML = join(GATEWAY_DIR, 'kong.yml');
/** The platform's file (prometheus): synced before ours, as KONG_DECLARATIVE_CONFIG's default does. */
export const PLATFORM_YML = join(GATEWAY_DIR, 'platform', 'kong.yml');
/** What `npm start` loads: the platform's file, then ours (GatewayOptions.configFile). */
export const GATEWAY_CONFIG = `${PLATFORM_YML},${KONG_YML}`;
export const PLUGINS_DIR = join(GATEWAY_DIR, 'plugins');
