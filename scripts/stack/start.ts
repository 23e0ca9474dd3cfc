import type { GatewayReady } from '../../gateway/local/index.ts';
import { readGatewaySettings } from '../../gateway/local/index.ts';
import { stackBanner } from './banner.ts';
import { runStack } from './run-stack.ts';

/** `npm start`: the backend and the local gateway (control plane + one data-plane node), two processes. */
await runStack<GatewayReady>({
  name: 'gateway',
  checkSettings: () => void readGatewaySettings(),
  stopping: 'the gateway',
  builtEntry: 'gateway/local/cmd/start.built.mjs',
  banner: stackBanner,
});
