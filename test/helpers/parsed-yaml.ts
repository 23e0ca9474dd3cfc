import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { REPO_ROOT } from './process.ts';

/**
 * The YAML document at `path`, parsed: from a JSON copy (`node_modules/.cache/animal-store/<name>`)
 * while the YAML has the size and time the copy was made from. A worker's first YAML parse is
 * ~0.17 CPU-s for gateway/openapi.yaml's 34 KB and ~0.45 for Kong's Admin API spec (323 KB), in
 * each test file that checks against them; reading the copy ~0.01.
 */
export function parsedYaml(path: string | URL, name: string): unknown {
  const file = path instanceof URL ? fileURLToPath(path) : path;
  const copyFile = join(REPO_ROOT, 'node_modules/.cache/animal-store', name);
  const { size, mtimeMs } = statSync(file);
  try {
    const copy = JSON.parse(readFileSync(copyFile, 'utf8')) as { size: number; mtimeMs: number; document: unknown };
    if (copy.size === size && copy.mtimeMs === mtimeMs) return copy.document;
  } catch {
    // no copy yet, or one cut short: parse the YAML
  }
  const document: unknown = parse(readFileSync(file, 'utf8'));
  mkdirSync(dirname(copyFile), { recursive: true });
  // written whole, then renamed: test files in parallel read either no copy or a complete one
  const staging = `${copyFile}.${process.pid}`;
  writeFileSync(staging, JSON.stringify({ size, mtimeMs, document }));
  renameSync(staging, copyFile);
  return document;
}
