// Builds, and keeps as fresh as its sources, the esbuild bundle of a TypeScript module of this
// repository and every module of it that it imports: what the tests' workers import
// (test/loader/), and what package.json's scripts run (./run-bundled.js). Plain JavaScript: it
// runs before anything can load TypeScript. esbuild is imported only to build.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { keepOwnMappings } from './own-mappings.js';
import { PACKAGES_BUNDLED } from './packages-bundled.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BUNDLE_DIR = join(REPO_ROOT, 'node_modules/.cache/animal-store/bundles');
/** Part of every bundle's record: a change here rebuilds every bundle. */
const FORMAT = 10;
/** The chunks that bundles built together share (bundleAll), by their contents' hash. */
const CHUNK_DIR = join(BUNDLE_DIR, 'chunks');

const bundlePathFor = (entry, suffix = '.mjs') => join(BUNDLE_DIR, `${relative(REPO_ROOT, entry)}${suffix}`);

/**
 * Each module keeps its own import.meta.url: the repository's code finds its files from it
 * (REPO_ROOT, the gateway's directory, fixtures), which a bundle elsewhere would move.
 */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/, namespace: 'file' }, ({ path }) => ({
      contents: readFileSync(path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)),
      loader: 'ts',
    }));
  },
};

/**
 * A package imported by `import()` stays external, imported by node from node_modules when that
 * code runs: in a build with chunks (bundleAll) esbuild gives such a chunk of a CommonJS package
 * only a default export (`const { createClient } = await import('redis')` would find nothing),
 * where node's own import names its exports. Those are the seldom-run paths (Redis for `usage`,
 * undici for TLS targets): nothing is lost by not bundling them.
 */
const packagesImportedLaterExternal = {
  name: 'packages-imported-later-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path, kind }) => (kind === 'dynamic-import' ? { path, external: true } : undefined));
  },
};

/** The module a test file's `import test from 'ava'` is given, with the file's URL (test/loader/ava-titles.ts). */
const AVA_TITLES = join(REPO_ROOT, 'test/loader/ava-titles.ts');

/**
 * A test file imports ava through AVA_TITLES, which prefixes its titles with the file's name when
 * the file runs in another file's worker (test/worker-groups/). Other modules import ava as it is.
 */
const avaTitledPerTestFile = {
  name: 'ava-titled-per-test-file',
  setup(build) {
    build.onResolve({ filter: /^ava$/ }, ({ importer, namespace }) =>
      namespace === 'file' && importer.endsWith('.test.ts') ? { path: importer, namespace: 'ava-titled' } : undefined,
    );
    build.onLoad({ filter: /./, namespace: 'ava-titled' }, ({ path }) => ({
      contents: `import { titledFor } from ${JSON.stringify(AVA_TITLES)};\nexport * from 'ava';\nexport default titledFor(${JSON.stringify(pathToFileURL(path).href)});\n`,
      resolveDir: REPO_ROOT,
      loader: 'js',
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
  // a copy of node_modules from another clone holds bundles of that clone's paths
  if (built.format !== FORMAT || built.root !== REPO_ROOT) return false;
  if (!built.chunks.every((chunk) => existsSync(join(BUNDLE_DIR, chunk)))) return false;
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

/**
 * Every bundle holds its npm packages too, but those of PACKAGES_BUNDLED's list: node then reads one
 * file where it resolved and compiled hundreds, ~0.2-0.3 CPU-s less for each start of the backend
 * or the portal, ~0.3 for a test worker (docs/testing.md, "Morning round").
 */
const BUILD_OPTIONS = {
  absWorkingDir: REPO_ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  ...PACKAGES_BUNDLED,
  sourcemap: 'inline',
  // the maps still name each module's file and line; the packages' sources would double the file
  sourcesContent: false,
  // and only our own modules' (./own-mappings.js, after each build)
  metafile: true,
  plugins: [ownImportMetaUrl, packagesImportedLaterExternal],
  logLevel: 'error',
};

/**
 * What is bundled: `module`, a module the tests' workers import, with ava left out (the worker's
 * own, where the tests register) and the test-only packages that find their own files (autocannon
 * starts its workers by path; puppeteer-core); `process`, an entry point run as a process
 * (./run-bundled.js).
 */
const KINDS = {
  module: {
    suffix: '.mjs',
    options: {
      ...BUILD_OPTIONS,
      external: [...PACKAGES_BUNDLED.external, 'ava', 'autocannon', 'puppeteer-core'],
      plugins: [...BUILD_OPTIONS.plugins, avaTitledPerTestFile],
    },
  },
  process: { suffix: '.run.mjs', options: BUILD_OPTIONS },
};

/** The path of `entry`'s bundle of that kind, built first when missing or older than any of its inputs. */
export async function bundleModule(entry, kind = 'module') {
  const { suffix, options } = KINDS[kind];
  const bundle = bundlePathFor(entry, suffix);
  if (isFresh(`${bundle}.inputs.json`)) return bundle;
  building++;
  try {
    return await buildBundle(entry, bundle, options);
  } finally {
    // esbuild's service process would otherwise live as long as this one (a stack's supervisor).
    if (--building === 0) await (await import('esbuild')).stop();
  }
}

async function buildBundle(entry, bundle, options) {
  mkdirSync(dirname(bundle), { recursive: true });
  const staging = `${bundle}.${process.pid}`;
  const started = Date.now();
  const { build } = await import('esbuild');
  const { metafile } = await build({ ...options, entryPoints: [entry], outfile: staging });
  const [output] = Object.values(metafile.outputs);
  keepOwnMappingsIn(staging);
  place(staging, bundle, output.inputs, [], started);
  return bundle;
}

/**
 * Builds the bundles of that kind of those of `entries` that are missing or stale, in one esbuild
 * run: each module is parsed once for all, where workers building their own would parse the
 * gateway once each (~3.6 CPU-s for the 115 test files, against ~0.3 each). What several of them
 * import (the npm packages, the gateway) is written once, in chunks they share, rather than into
 * each bundle: 12 MB instead of 675 MB for the 141 test files, 2 s of esbuild instead of 28.
 */
export async function bundleAll(entries, kind = 'module') {
  const { suffix, options } = KINDS[kind];
  const stale = entries.filter((entry) => !isFresh(`${bundlePathFor(entry, suffix)}.inputs.json`));
  if (stale.length === 0) return 0;
  const staging = `${BUNDLE_DIR}.${process.pid}`;
  const started = Date.now();
  const { build, stop } = await import('esbuild');
  try {
    const { metafile } = await build({
      ...options,
      entryPoints: stale,
      outdir: staging,
      outbase: REPO_ROOT,
      outExtension: { '.js': `.ts${suffix}` },
      splitting: true,
      // esbuild's hash is of its own output: the format in the name keeps an older format's chunk
      // (the same hash, another treatment after the build) from being taken for this one
      chunkNames: `chunks/[name]-${FORMAT}-[hash]`,
    });
    const asked = new Set(stale.map((entry) => relative(REPO_ROOT, entry)));
    const outputs = Object.entries(metafile.outputs);
    const isBundle = ({ entryPoint }) => entryPoint !== undefined && asked.has(entryPoint);
    const inStaging = (output) => relative(staging, join(REPO_ROOT, output));
    for (const output of Object.keys(metafile.outputs)) keepOwnMappingsIn(join(REPO_ROOT, output));
    // Chunks first, an entry in place must find the chunks it imports: the shared ones and those of
    // dynamic imports (esbuild's entries too, in the metafile).
    for (const [output, meta] of outputs) {
      if (isBundle(meta)) continue;
      const chunk = join(BUNDLE_DIR, inStaging(output));
      mkdirSync(dirname(chunk), { recursive: true });
      // named by their contents: one already there is this one
      if (!existsSync(chunk)) renameSync(join(REPO_ROOT, output), chunk);
    }
    for (const [output, meta] of outputs) {
      if (!isBundle(meta)) continue;
      const chunks = chunksOf(metafile.outputs, output);
      const inputs = Object.assign({}, ...[output, ...chunks].map((file) => metafile.outputs[file].inputs));
      const bundle = bundlePathFor(join(REPO_ROOT, meta.entryPoint), suffix);
      mkdirSync(dirname(bundle), { recursive: true });
      place(join(REPO_ROOT, output), bundle, inputs, chunks.map(inStaging), started);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
    await stop();
  }
  pruneChunks();
  return stale.length;
}

const PACKAGES_DIR = join(REPO_ROOT, 'node_modules');

/** The built file at `file` with its inline map cut to our own modules' mappings (./own-mappings.js). */
function keepOwnMappingsIn(file) {
  const text = readFileSync(file, 'utf8');
  const kept = keepOwnMappings(text, file, PACKAGES_DIR);
  if (kept !== text) writeFileSync(file, kept);
}

/** The chunks an output imports, directly or through other chunks (esbuild's metafile paths). */
function chunksOf(outputs, output, found = new Set()) {
  for (const { path } of outputs[output].imports) {
    if (path in outputs && !found.has(path)) {
      found.add(path);
      chunksOf(outputs, path, found);
    }
  }
  return [...found];
}

/** A chunk left unused this long by every bundle's record is deleted: not one another process is placing. */
const UNUSED_CHUNK_AGE_MS = 10 * 60 * 1000;

/** Deletes the chunks no bundle uses any longer (those bundles rebuilt since). */
function pruneChunks() {
  let names;
  try {
    names = readdirSync(CHUNK_DIR);
  } catch {
    return;
  }
  const used = new Set();
  for (const file of readdirSync(BUNDLE_DIR, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.inputs.json')) continue;
    try {
      for (const chunk of JSON.parse(readFileSync(join(BUNDLE_DIR, file), 'utf8')).chunks ?? []) used.add(chunk);
    } catch {
      // a record being replaced: its chunks are young
    }
  }
  for (const name of names) {
    const chunk = join(CHUNK_DIR, name);
    if (used.has(relative(BUNDLE_DIR, chunk))) continue;
    try {
      if (Date.now() - statSync(chunk).mtimeMs > UNUSED_CHUNK_AGE_MS) rmSync(chunk, { force: true });
    } catch {
      // deleted by another process meanwhile
    }
  }
}

/**
 * Moves a built bundle into place with the record of its inputs (size and time of each) and of the
 * chunks it imports (paths under BUNDLE_DIR).
 */
function place(built, bundle, builtFrom, chunks, started) {
  const inputs = {};
  let settled = true;
  for (const file of Object.keys(builtFrom)) {
    // a plugin's module (`ava-titled:…`) has no file of its own: the test file it names is an input
    if (file.startsWith('ava-titled:')) continue;
    const stat = statSync(join(REPO_ROOT, file));
    inputs[file] = [stat.size, stat.mtimeMs];
    // Changed while it was read: this bundle serves this run, the next one builds again.
    if (stat.mtimeMs >= started) settled = false;
  }
  renameSync(built, bundle);
  if (!settled) return;
  const record = `${bundle}.inputs.json`;
  writeFileSync(`${record}.${process.pid}`, JSON.stringify({ format: FORMAT, root: REPO_ROOT, inputs, chunks }));
  renameSync(`${record}.${process.pid}`, record);
}
