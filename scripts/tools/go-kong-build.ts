import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { withBuildLock } from './build-lock.ts';
import { DECK_VERSION, makeWritable, run } from './deck-build.ts';

const DECK_MODULE = 'github.com/kong/deck';
const GO_KONG_MODULE = 'github.com/kong/go-kong';

/** go-kong's integration tests, compiled: the binary and each test file's top-level tests. */
export interface GoKongTests {
  version: string;
  binary: string;
  /** `service_service_test.go` → `['TestServicesService', …]`. */
  testsByFile: Record<string, string[]>;
}

function cacheRoot(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'animal-store');
}

function download(module: string, cwd: string, log: (line: string) => void): { Dir: string; GoMod: string } {
  const info = JSON.parse(run('go', ['mod', 'download', '-json', module], cwd, log).stdout) as { Dir?: string; GoMod?: string };
  if (!info.Dir || !info.GoMod) throw new Error(`go mod download did not report where ${module} is`);
  return { Dir: info.Dir, GoMod: info.GoMod };
}

/** The go-kong version decK's go.mod requires: the client decK syncs with. */
function goKongVersionOfDeck(cwd: string, log: (line: string) => void): string {
  const goMod = readFileSync(download(`${DECK_MODULE}@${DECK_VERSION}`, cwd, log).GoMod, 'utf8');
  const version = new RegExp(`^\\s*${GO_KONG_MODULE.replaceAll('.', '\\.')}\\s+(v\\S+)`, 'm').exec(goMod)?.[1];
  if (!version) throw new Error(`decK ${DECK_VERSION}'s go.mod does not require ${GO_KONG_MODULE}`);
  return version;
}

/** Top-level tests of a Go test file (`func TestX(t *testing.T)`; TestMain takes *testing.M). */
function testsOf(source: string): string[] {
  return [...source.matchAll(/^func (Test\w*)\(\s*\w+\s+\*testing\.T\s*\)/gm)].map((match) => match[1]!);
}

/**
 * go-kong's tests at the version decK builds with, compiled once with `go test -c` into the cache
 * beside decK's binary (the module comes from the Go module proxy; its source is not committed).
 * Reports the build's time through `log`.
 */
export function ensureGoKongTests(log: (line: string) => void = () => undefined, env: NodeJS.ProcessEnv = process.env): GoKongTests {
  const root = cacheRoot(env);
  mkdirSync(root, { recursive: true });
  const version = goKongVersionOfDeck(root, () => undefined);
  const dir = join(root, `go-kong-${version}`);
  const manifest = join(dir, 'tests.json');
  const built = (): GoKongTests | undefined => (existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as GoKongTests) : undefined);
  return built() ?? withBuildLock(root, built, () => buildGoKongTests(root, version, dir, manifest, log), log);
}

function buildGoKongTests(root: string, version: string, dir: string, manifest: string, log: (line: string) => void): GoKongTests {
  const started = Date.now();
  log(`building go-kong ${version}'s tests (the version decK ${DECK_VERSION} builds with) into ${dir} (once)`);
  const work = mkdtempSync(join(root, '.go-kong-build-'));
  try {
    const source = join(work, 'go-kong');
    cpSync(download(`${GO_KONG_MODULE}@${version}`, work, log).Dir, source, { recursive: true });
    makeWritable(source);
    run('go', ['test', '-c', '-o', join(work, 'go-kong.test'), './kong'], source, log);
    const kongDir = join(source, 'kong');
    const testsByFile = Object.fromEntries(
      readdirSync(kongDir)
        .filter((file) => file.endsWith('_test.go'))
        .map((file) => [file, testsOf(readFileSync(join(kongDir, file), 'utf8'))]),
    );
    mkdirSync(dir, { recursive: true });
    const binary = join(dir, 'go-kong.test');
    renameSync(join(work, 'go-kong.test'), binary);
    const tests: GoKongTests = { version, binary, testsByFile };
    writeFileSync(manifest, JSON.stringify(tests, null, 2));
    log(`built go-kong ${version}'s tests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return tests;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
