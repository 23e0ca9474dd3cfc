import { reservePort } from '../../packages/node-runtime/free-port.js';
import { fileURLToPath } from 'node:url';
import { readBackendConfigOrExit } from '../../backend/src/config.ts';
import { readPortalListen } from '../../portal/src/settings.ts';
import { buildGateway } from '../tools/build-gateway.ts';
import { StartFailed, Supervisor, describeExit, type RunningChild } from './supervisor.ts';

export interface StackOptions<Ready> {
  /** The gateway side's name in the supervisor's lines: `gateway` or `cluster`. */
  name: string;
  /** Throws on a bad setting, whose message is the one line printed. */
  checkSettings(): void;
  /** What a Ctrl-C stops before the backend, for its line. */
  stopping: string;
  /** The gateway side's entry point, bundled to plain JavaScript by scripts/tools/build-gateway.ts first. */
  builtEntry: string;
  banner(supervisorPid: number, backend: RunningChild<string>, gateway: RunningChild<Ready>, portal?: RunningChild<string>): string;
  /**
   * With it, the developer portal (portal/) starts once the gateway serves, with these settings
   * (the gateway's addresses); the gateway routes /portal/ to PORTAL_HOST:PORTAL_PORT.
   */
  portalEnv?(gateway: Ready): Record<string, string>;
}

/**
 * The backend and one gateway-side process under one supervisor (./supervisor.ts), as in
 * production: `npm start` and `npm run start:cluster`. Settings are checked first, so a bad
 * variable starts nothing; a child that fails to start has said why in one line.
 */
export async function runStack<Ready>(options: StackOptions<Ready>): Promise<void> {
  readBackendConfigOrExit();
  let portalListen: { host: string; port: number } | undefined;
  try {
    if (options.portalEnv) portalListen = readPortalListen(process.env);
  } catch (error) {
    console.error(`[portal] ${(error as Error).message}`);
    process.exit(2);
  }
  try {
    options.checkSettings();
  } catch (error) {
    console.error(`[${options.name}] ${(error as Error).message}`);
    process.exit(2);
  }

  const supervisor = new Supervisor(
    (line) => console.error(line),
    () => process.exit(1),
  );
  let stopRequested = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopRequested) return;
      stopRequested = true;
      console.log(`[stack] ${signal}: stopping ${options.stopping}, then the backend`);
      void supervisor.stop().then((clean) => process.exit(clean ? 0 : 1));
    });
  }

  // Absolute paths: the children run in our working directory, where DATA_DIR and
  // KONG_DECLARATIVE_CONFIG are relative to, wherever the repository is.
  const entry = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
  // the bundle from the sources as they are now (~100 ms), whoever started us
  await buildGateway();
  const cwd = process.cwd();
  // The TypeScript children as the bundles of their sources, rebuilt when stale: plain node, no
  // TypeScript loader in them (tsx: ~0.3-0.5 CPU-s more per start, docs/testing.md)
  const bundled = (path: string) => [entry('scripts/tools/run-bundled.js'), entry(path)];
  try {
    const backend = await supervisor.start<string>({
      name: 'backend',
      nodeArgs: bundled('backend/src/main.ts'),
      env: process.env,
      cwd,
    });
    let portalPort: number | undefined;
    let portalUrl: Record<string, string> = {};
    // PORTAL_PORT=0: a port held from here until the portal starts, the gateway's start between
    let portalReserved: Awaited<ReturnType<typeof reservePort>> | undefined;
    if (portalListen) {
      if (portalListen.port === 0) portalReserved = await reservePort(portalListen.host);
      portalPort = portalReserved?.port ?? portalListen.port;
      const host = ['0.0.0.0', '::'].includes(portalListen.host) ? '127.0.0.1' : portalListen.host;
      portalUrl = { DECK_ANIMAL_STORE_PORTAL_URL: `http://${host.includes(':') ? `[${host}]` : host}:${portalPort}` };
    }
    const gateway = await supervisor.start<Ready>({
      name: options.name,
      // A 4 MB young generation keeps the control plane's RSS ~20-30 MB lower at no measurable
      // cost; plain JavaScript, as tsx would add ~35 MB.
      nodeArgs: ['--max-semi-space-size=4', entry(options.builtEntry)],
      env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.ready, ...portalUrl, ...process.env },
      cwd,
    });
    await portalReserved?.release();
    const portal =
      options.portalEnv && portalPort !== undefined
        ? await supervisor.start<string>({
            name: 'portal',
            nodeArgs: bundled('portal/src/main.ts'),
            // open sign-up on a developer's machine (production's default is invite); this
            // stack's gateway, whatever KONG_ADMIN_URL the shell may hold for another
            env: { PORTAL_SIGNUP: 'open', ...process.env, ...options.portalEnv(gateway.ready), PORTAL_PORT: String(portalPort) },
            cwd,
          })
        : undefined;
    if (!stopRequested) console.log(options.banner(process.pid, backend, gateway, portal));
  } catch (error) {
    if (!(error instanceof StartFailed)) throw error;
    if (error.exit.signal) console.error(`[stack] ${error.child} ${describeExit(error.exit)} while starting`);
    await supervisor.stop();
    process.exit(error.exit.code || 1);
  }
}
