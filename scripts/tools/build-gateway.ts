import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGES_BUNDLED } from './packages-bundled.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CMD_DIR = join(REPO_ROOT, 'gateway/local/cmd/');
const OUTPUTS = ['start.built.mjs', 'cluster-start.built.mjs'].map((file) => join(CMD_DIR, file));
/** Scripts whose options a build follows: a change to either builds again. */
const OPTIONS = ['build-gateway.ts', 'packages-bundled.js'].map((file) => relative(REPO_ROOT, fileURLToPath(new URL(file, import.meta.url))));
/**
 * What the last build was made from: the size and time of every source it read, of the scripts
 * above (its options) and of the two files it wrote. Beside the tests' bundles, ignored by git.
 */
const RECORD = join(REPO_ROOT, 'node_modules/.cache/animal-store/gateway-build.json');

type Stats = Record<string, [size: number, mtimeMs: number]>;

function statsOf(files: string[]): Stats {
  return Object.fromEntries(
    files.map((file) => {
      const stat = statSync(join(REPO_ROOT, file));
      return [file, [stat.size, stat.mtimeMs]];
    }),
  );
}

/** The built files are there and every file the record names has the size and time it had. */
function isFresh(): boolean {
  try {
    const record = JSON.parse(readFileSync(RECORD, 'utf8')) as { root: string; files: Stats };
    if (record.root !== REPO_ROOT) return false;
    const files = Object.keys(record.files);
    if (!OUTPUTS.every((output) => files.includes(relative(REPO_ROOT, output)))) return false;
    const now = statsOf(files);
    return files.every((file) => now[file]![0] === record.files[file]![0] && now[file]![1] === record.files[file]![1]);
  } catch {
    return false;
  }
}

/**
 * Bundles the local gateway's two entry points into plain JavaScript beside their sources
 * (gateway/local/cmd/*.built.mjs, ignored by git), which `npm start`, `npm run start:cluster`,
 * `npm run start:gateway`, the bench and the fuzz run execute with node alone. Under tsx the
 * control plane's process is ~35 MB larger (the loader and esbuild's API stay resident), a quarter
 * of the gateway's memory budget. Beside the sources, import.meta.url-relative paths (the data
 * plane's directory) hold. npm packages are bundled too, but a few (./packages-bundled.js): the
 * control plane's start ~1.1 -> ~0.8 CPU-s, its RSS the same. Every start calls this, so none runs a
 * bundle older than the sources: it builds (~100 ms, ~0.1 CPU-s) only when a source, this script
 * or a built file differs in size or time from the last build's record. Built aside and renamed
 * into place, so a gateway starting meanwhile reads the old file or the new one.
 */
export async function buildGateway(): Promise<void> {
  if (isFresh()) return;
  const started = Date.now();
  const staging = mkdtempSync(join(CMD_DIR, '.build-'));
  // imported here: npm start's supervisor imports this module and builds once
  const { build, stop } = await import('esbuild');
  try {
    const { metafile } = await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: [join(CMD_DIR, 'start.ts'), join(CMD_DIR, 'cluster-start.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      ...PACKAGES_BUNDLED,
      outdir: staging,
      outExtension: { '.js': '.built.mjs' },
      logLevel: 'warning',
      metafile: true,
    });
    for (const file of readdirSync(staging)) renameSync(join(staging, file), join(CMD_DIR, file));
    const sources = [...Object.keys(metafile.inputs), ...OPTIONS];
    const files = statsOf([...sources, ...OUTPUTS.map((output) => relative(REPO_ROOT, output))]);
    // a source changed while it was read: this build serves this start, the next one builds again
    if (sources.some((file) => files[file]![1] >= started)) return;
    mkdirSync(dirname(RECORD), { recursive: true });
    writeFileSync(`${RECORD}.${process.pid}`, JSON.stringify({ root: REPO_ROOT, files }));
    renameSync(`${RECORD}.${process.pid}`, RECORD);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    // esbuild's service process would otherwise live as long as this one (a stack's supervisor)
    await stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildGateway();
