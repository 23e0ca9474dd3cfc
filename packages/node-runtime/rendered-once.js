import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

/**
 * `render()`'s result, kept as JSON under `node_modules/.cache/animal-store/rendered/` by the hash
 * of everything it is rendered from, so that the next process that renders the same reads it
 * instead: the served contract is parsed and rendered at each start of the backend and the portal
 * (~0.25 CPU-s each, docs/testing.md), and the test suite starts both many times.
 *
 * Only in a development clone, whose `node_modules/.cache/` the bundles and the type-check keep
 * theirs in: a production image has none, and renders at each start as before. The key holds
 * `inputs` (the source, the settings, the render function's own text) and the installed version of
 * each of `packages` (what renders), so that a change to any of them renders again. A cache that
 * cannot be read or written is passed by: the value is rendered.
 *
 * @template T
 * @param {URL} nodeModules the repository's node_modules/, found from the caller's import.meta.url
 * @param {{ inputs: unknown[], packages: string[] }} key
 * @param {() => T} render
 * @returns {T}
 */
export function renderedOnce(nodeModules, { inputs, packages }, render) {
  const root = fileURLToPath(nodeModules);
  if (!existsSync(join(root, '.cache'))) return render();
  let versions;
  try {
    versions = packages.map((name) => JSON.parse(readFileSync(join(root, name, 'package.json'), 'utf8')).version);
  } catch {
    return render();
  }
  const directory = join(root, '.cache/animal-store/rendered');
  const file = join(directory, `${createHash('sha256').update(JSON.stringify([inputs, packages, versions])).digest('hex')}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // not rendered yet (a file being written appears whole: renamed into place)
  }
  const value = render();
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(value));
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    // a tree it cannot write to: rendered at each start
  }
  return value;
}
