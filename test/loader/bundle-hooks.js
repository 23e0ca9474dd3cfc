// Module hooks for ava's workers (register.js): a TypeScript module of the repository, the test
// file first, is imported as one esbuild bundle of itself and every module it imports
// (scripts/tools/module-bundles.js). Through tsx, each module and each npm package module it pulls in would cross
// Node 20's loader thread and tsx's resolution one by one: a worker importing the gateway spends
// ~1.6 CPU-s before a test runs, ~0.7 as a bundle (docs/testing.md, "What each start costs").
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLE_DIR, bundleModule, REPO_ROOT } from '../../scripts/tools/module-bundles.js';

const REPO_URL = pathToFileURL(REPO_ROOT).href;
const NODE_MODULES_URL = pathToFileURL(`${REPO_ROOT}node_modules/`).href;
const BUNDLE_DIR_URL = pathToFileURL(`${BUNDLE_DIR}/`).href;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const { url } = resolved;
  if (!url.endsWith('.ts') || !url.startsWith(REPO_URL) || url.startsWith(NODE_MODULES_URL)) return resolved;
  return { url: pathToFileURL(await bundleModule(fileURLToPath(url))).href, format: 'module', shortCircuit: true };
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith(BUNDLE_DIR_URL)) return nextLoad(url, context);
  return { format: 'module', source: readFileSync(fileURLToPath(url), 'utf8'), shortCircuit: true };
}
