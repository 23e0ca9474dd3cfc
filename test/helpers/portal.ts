import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortal, type HashSlotLimits, type PortalConfig, type RunningPortal, type ScryptCost } from '../../portal/src/index.ts';
import { startStack, type TestStack } from './stack.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

/**
 * scrypt at 2^10 instead of production's 2^15: ~1 ms a hash instead of ~60, as frameworks lower
 * password hashing's cost in tests; the portal started as a process (portal-replicas) hashes at
 * production's cost, and its test reads that cost from the stored hash.
 */
const TEST_SCRYPT_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

export interface TestPortal extends RunningPortal {
  config: PortalConfig;
  audit: string[];
  dispose(): Promise<void>;
}

/** A portal on an ephemeral port with its own store, talking to `adminUrl`; its audit lines are kept. */
export async function startTestPortal(options: {
  adminUrl: string;
  apiUrl: string;
  signUp: 'open' | 'invite';
  clock?: () => number;
  statusUrls?: URL[];
  /** The usage charts' source (PORTAL_PROMETHEUS_URL); unset, the portal samples statusUrls. */
  prometheusUrl?: URL;
  /** A port reserved for it (a gateway routing to it started first); default any free one. */
  port?: number;
  supportEmail?: string;
  hashSlots?: HashSlotLimits;
  /** New password hashes' cost: default TEST_SCRYPT_COST; SCRYPT_COST for what production's costs. */
  passwordCost?: ScryptCost;
  /** A store made before (kept by dispose); default a new one of its own, removed by dispose. */
  dataDir?: string;
}): Promise<TestPortal> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'portal-'));
  const config: PortalConfig = {
    host: '127.0.0.1',
    port: options.port ?? 0,
    dataDir,
    signUp: options.signUp,
    publicUrl: 'http://portal.test',
    apiUrl: options.apiUrl,
    adminUrl: options.adminUrl,
    statusUrls: options.statusUrls ?? [],
    ...(options.prometheusUrl ? { prometheusUrl: options.prometheusUrl } : {}),
    cookieSecret: 'a test secret of at least thirty-two characters',
    ...(options.supportEmail ? { supportEmail: options.supportEmail } : {}),
  };
  const audit: string[] = [];
  const portal = await startPortal(config, {
    clock: options.clock,
    audit: (entry) => audit.push(JSON.stringify(entry)),
    ...(options.hashSlots ? { hashSlots: options.hashSlots } : {}),
    passwordCost: options.passwordCost ?? TEST_SCRYPT_COST,
  });
  return {
    ...portal,
    config,
    audit,
    async dispose() {
      await portal.close();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface PortalBehindGateway {
  stack: TestStack;
  portal: TestPortal;
  dispose(): Promise<void>;
}

/**
 * The stack (backend + gateway on gateway/kong.yml) with an open-sign-up portal behind it: the
 * gateway routes to the portal's address, so the port is chosen first and the portal started on it.
 * `stackClock`: the portal reads the stack's manual clock (default: the real one).
 */
export async function startPortalBehindGateway(options: { stackClock?: boolean } = {}): Promise<PortalBehindGateway> {
  const port = await freePort();
  const stack = await startStack({ env: { DECK_ANIMAL_STORE_PORTAL_URL: `http://127.0.0.1:${port}` }, node: { statusListen: '127.0.0.1:0' } });
  try {
    const portal = await startTestPortal({
      adminUrl: stack.gateway.adminUrl,
      apiUrl: `${stack.gateway.proxyUrl}/v1`,
      signUp: 'open',
      port,
      clock: options.stackClock ? stack.clock.now : undefined,
      statusUrls: [new URL(stack.gateway.statusUrl!)],
    });
    return {
      stack,
      portal,
      async dispose() {
        await portal.dispose();
        await stack.dispose();
      },
    };
  } catch (error) {
    await stack.dispose();
    throw error;
  }
}

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One browser's view of the portal: a cookie jar (name → value, as a browser sends them back),
 * the last page's CSRF field, and a client address sent as X-Forwarded-For (the gateway's).
 */
export class PortalBrowser {
  readonly cookies = new Map<string, string>();
  csrf = '';

  /** `ip`: sent as X-Forwarded-For when the portal is called directly (through the gateway, Kong appends the real one). */
  constructor(
    private readonly origin: string,
    readonly ip = '192.0.2.1',
  ) {}

  private async send(path: string, init: RequestInit): Promise<PageResponse> {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', this.ip);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(`${this.origin}${path}`, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      const expired = /max-age=0|expires=Thu, 01 Jan 1970/i.test(line);
      if (expired) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    const text = await response.text();
    const csrf = /name="_csrf" value="([^"]*)"/.exec(text)?.[1];
    if (csrf !== undefined) this.csrf = csrf;
    return { status: response.status, headers: response.headers, text };
  }

  get(path: string): Promise<PageResponse> {
    return this.send(path, {});
  }

  /** A form POST with the last page's CSRF token unless `fields` has its own `_csrf` (or `csrf: false`); an array: a repeated field. */
  post(path: string, fields: Record<string, string | string[]>, { csrf = true } = {}): Promise<PageResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...(csrf ? { _csrf: this.csrf } : {}), ...fields })) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    return this.send(path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  /** A form POST of these exact bytes (no CSRF field added), for bodies URLSearchParams cannot write. */
  postBytes(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.send(path, { method: 'POST', body: new Blob([new Uint8Array(body)]), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
  }
}

/** The API key a key page shows. */
export const shownKey = (page: PageResponse) => /id="api-key"[^>]*value="(ask_[^"]+)"/.exec(page.text)?.[1];
