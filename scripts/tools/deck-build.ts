import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { withBuildLock } from './build-lock.ts';

/** The decK release the project pins (docker-compose's kong/deck image uses the same tag). */
export const DECK_VERSION = 'v1.65.1';
const DECK_MODULE = 'github.com/kong/deck';
/** decK's AI-Gateway commands import this module, which the Go module proxy does not serve. */
const AI_CONVERTER_MODULE = 'github.com/Kong/ai-deck-converter';

/** Where the built binary lives: outside the repository, shared by every clone on the machine. */
export function deckBinaryPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'animal-store', `deck-${DECK_VERSION}`, 'deck');
}

export class DeckBuildError extends Error {}

/** Runs a Go command as the builds need it (module mode, no workspace, no VCS stamping). */
export function run(command: string, args: string[], cwd: string, log: (line: string) => void): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=mod -buildvcs=false`.trim(), GOWORK: 'off' } });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new DeckBuildError(`building decK ${DECK_VERSION} needs Go (its go.mod asks for 1.26.4; any Go from 1.21 fetches that toolchain itself): install Go, put it on PATH and run again`);
  }
  if (result.status !== 0) {
    throw new DeckBuildError(`\`${command} ${args.join(' ')}\` failed (exit ${result.status}):\n${(result.stderr || result.stdout).trim()}`);
  }
  log(`  ${command} ${args.slice(0, 3).join(' ')}${args.length > 3 ? ' …' : ''}`);
  return result;
}

/**
 * The AI-Gateway converter's two entry points, answering that they are not part of this build.
 * Only `deck file ai2kong` and the AI dump/sync commands reach them.
 */
function writeAiConverterStub(dir: string): void {
  const message = 'the AI Gateway converter is not part of this decK build (its module is not on the Go module proxy)';
  writeFileSync(join(dir, 'go.mod'), `module ${AI_CONVERTER_MODULE}\n\ngo 1.22\n`);
  for (const [pkg, fn] of [['convert', 'Convert'], ['revert', 'Revert']] as const) {
    mkdirSync(join(dir, pkg));
    writeFileSync(
      join(dir, pkg, `${pkg}.go`),
      `// Package ${pkg} stands in for ${AI_CONVERTER_MODULE}/${pkg} in the Animal Store's decK build.\npackage ${pkg}\n\nimport "errors"\n\ntype Options struct{ OutputMode string }\n\nfunc ${fn}(_ []byte, _ Options) ([]byte, []string, error) {\n\treturn nil, nil, errors.New(${JSON.stringify(message)})\n}\n`,
    );
  }
}

export function makeWritable(path: string): void {
  const stat = statSync(path);
  chmodSync(path, stat.mode | 0o200);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

/**
 * Builds decK from the Go module proxy unless the cached binary exists; returns its path.
 * decK's go.mod has `replace` directives, so `go install …@version` refuses: the module is
 * downloaded, copied somewhere writable and built there, in a temporary directory next to the
 * cache so that the finished binary is renamed into place atomically.
 */
export function ensureDeck(log: (line: string) => void = () => undefined, env: NodeJS.ProcessEnv = process.env): string {
  const binary = deckBinaryPath(env);
  if (existsSync(binary)) return binary;
  run('go', ['version'], process.cwd(), () => undefined);
  const cacheDir = join(binary, '..');
  return withBuildLock(cacheDir, () => (existsSync(binary) ? binary : undefined), () => buildDeck(binary, cacheDir, log), log);
}

function buildDeck(binary: string, cacheDir: string, log: (line: string) => void): string {
  const work = mkdtempSync(join(cacheDir, '.build-'));
  try {
    log(`building decK ${DECK_VERSION} from the Go module proxy into ${binary} (once; a few minutes)`);
    const download = run('go', ['mod', 'download', '-json', `${DECK_MODULE}@${DECK_VERSION}`], work, log);
    const moduleDir = (JSON.parse(download.stdout) as { Dir?: string }).Dir;
    if (!moduleDir) throw new DeckBuildError(`go mod download did not report where ${DECK_MODULE}@${DECK_VERSION} is`);
    const source = join(work, 'deck');
    cpSync(moduleDir, source, { recursive: true });
    makeWritable(source);
    const stub = join(work, 'ai-deck-converter');
    mkdirSync(stub);
    writeAiConverterStub(stub);
    run('go', ['mod', 'edit', `-replace=${AI_CONVERTER_MODULE}=${stub}`], source, log);
    const ldflags = `-s -w -X ${DECK_MODULE}/cmd.VERSION=${DECK_VERSION} -X ${DECK_MODULE}/cmd.COMMIT=animal-store-build`;
    run('go', ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', join(work, 'deck.bin'), '.'], source, log);
    renameSync(join(work, 'deck.bin'), binary);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
