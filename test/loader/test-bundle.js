// Builds, and keeps as fresh as its sources, the esbuild bundle of one module (bundle-hooks.js).
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { build, stop } from 'esbuild';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BUNDLE_DIR = join(REPO_ROOT, 'node_modules/.cache/animal-store/test-bundles');
/** Part of every bundle's record: a change here rebuilds every bundle. */
const FORMAT = 1;

const bundlePathFor = (entry) => join(BUNDLE_DIR, `${relative(REPO_ROOT, entry)}.mjs`);

/**
 * Each module keeps its own import.meta.url: the repository's code finds its files from it
 * (REPO_ROOT, the gateway's directory, fixtures), which a bundle elsewhere would move.
 */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, ({ path }) => ({
      contents: readFileSync(path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)),
      loader: 'ts',
    }));
  },
};

/** The bundle is fresh when every input it was built from has the size and time it had then. */
function isFresh(record) {
  let built;
  try {
    built = JSON.parse(readFileSync(record, 'utf8'));
  } catch {
    return false;
  }
  if (built.format !== FORMAT) return false;
  for (const [file, [size, mtimeMs]] of Object.entries(built.inputs)) {
    try {
      const stat = statSync(join(REPO_ROOT, file));
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

let building = 0;

/** The path of `entry`'s bundle, built first when missing or older than any of its inputs. */
export async function bundleModule(entry) {
  const bundle = bundlePathFor(entry);
  if (isFresh(`${bundle}.inputs.json`)) return bundle;
  building++;
  try {
    return await buildBundle(entry, bundle);
  } finally {
    // esbuild's service process would otherwise live as long as this one (a stack's supervisor).
    if (--building === 0) await stop();
  }
}

async function buildBundle(entry, bundle) {
  const record = `${bundle}.inputs.json`;
  mkdirSync(dirname(bundle), { recursive: true });
  const staging = `${bundle}.${process.pid}`;
  const started = Date.now();
  const { metafile } = await build({
    entryPoints: [entry],
    absWorkingDir: REPO_ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    metafile: true,
    outfile: staging,
    plugins: [ownImportMetaUrl],
    logLevel: 'error',
  });
  const inputs = {};
  let settled = true;
  for (const file of Object.keys(metafile.inputs)) {
    const stat = statSync(join(REPO_ROOT, file));
    inputs[file] = [stat.size, stat.mtimeMs];
    // Changed while it was read: this bundle serves this run, the next one builds again.
    if (stat.mtimeMs >= started) settled = false;
  }
  renameSync(staging, bundle);
  if (!settled) return bundle;
  writeFileSync(`${record}.${process.pid}`, JSON.stringify({ format: FORMAT, inputs }));
  renameSync(`${record}.${process.pid}`, record);
  return bundle;
}
