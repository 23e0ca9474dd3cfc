import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DECK_VERSION, deckBinaryPath } from '../../scripts/tools/deck-build.ts';
import { request, type JsonResponse } from './backend.ts';
import { startTestBackend, type TestBackend } from './backend.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';
import { GATEWAY_CONFIG, KONG_YML } from './gateway-files.ts';
import { runToEnd, type ProcessResult } from './process.ts';
import { LOCAL_DECK_ENV } from '../../gateway/local/index.ts';

export { KONG_YML };

export type DeckResult = ProcessResult;

/**
 * The real decK binary `npm run deck` builds. Missing is a failure, never a skip: the decK tests
 * are how this project knows the local gateway answers as Kong does.
 */
export function deckBinary(): string {
  const binary = deckBinaryPath();
  if (!existsSync(binary)) {
    throw new Error(`decK ${DECK_VERSION} is not built (${binary} is missing): run \`npm run deck -- version\` once (needs Go; .ci/run does it)`);
  }
  return binary;
}

/** Runs decK with `args` in the repository root; DECK_* variables come from `env`. */
export function runDeck(args: string[], env: Record<string, string> = {}): Promise<DeckResult> {
  return runToEnd(deckBinary(), [...args, '--analytics=false', '--no-color'], { PATH: process.env.PATH, HOME: process.env.HOME, ...env });
}

/** Runs decK and throws with its output unless it exits 0. */
export async function deck(args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await runDeck(args, env);
  if (result.code !== 0) throw new Error(`deck ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** decK's "Summary: Created: n Updated: n Deleted: n" (diff and sync). */
export function summaryOf(output: string): { created: number; updated: number; deleted: number } {
  const count = (label: string) => {
    const match = new RegExp(`${label}: (\\d+)`).exec(output);
    if (!match) throw new Error(`no "${label}" in decK's output:\n${output}`);
    return Number(match[1]);
  };
  return { created: count('Created'), updated: count('Updated'), deleted: count('Deleted') };
}

export interface DeckStack {
  backend: TestBackend;
  gateway: TestGateway;
  /** DECK_ANIMAL_STORE_BACKEND_URL for this stack's backend. */
  env: Record<string, string>;
  /** `--kong-addr <admin>` for decK. */
  addr: string[];
  admin(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  /** A file in this stack's own temporary directory. */
  file(name: string, content?: string): string;
  dispose(): Promise<void>;
}

/**
 * A backend and a local gateway on ephemeral ports. `declarative` is the gateway's own file:
 * the platform's file and kong.yml (its built-in load, as `npm start` does) or `empty` (configured only through the
 * Admin API, e.g. by `deck gateway sync`). `extraEnv` adds to the DECK_ variables.
 */
export async function startDeckStack(declarative: 'kong.yml' | 'empty', extraEnv: Record<string, string> = {}): Promise<DeckStack> {
  const dir = mkdtempSync(join(tmpdir(), 'deck-'));
  const backend = await startTestBackend();
  const env = { ...LOCAL_DECK_ENV, DECK_ANIMAL_STORE_BACKEND_URL: backend.url, ...extraEnv };
  const configFile = declarative === 'kong.yml' ? GATEWAY_CONFIG : join(dir, 'empty.yml');
  if (declarative === 'empty') writeFileSync(configFile, '_format_version: "3.0"\n');
  const gateway = await startTestGateway({ configFile, dir: join(dir, 'gateway'), env });
  return {
    backend,
    gateway,
    env,
    addr: ['--kong-addr', gateway.adminUrl],
    admin: (path, init = {}) => request(`${gateway.adminUrl}${path}`, init),
    file(name, content) {
      const path = join(dir, name);
      if (content !== undefined) writeFileSync(path, content);
      return path;
    },
    async dispose() {
      await gateway.dispose();
      await backend.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
