// `node scripts/tools/run-bundled.js <entry.ts> [args…]`: runs a TypeScript entry point of this
// repository as the esbuild bundle of it and its modules (./module-bundles.js), built first when
// missing or older than any of its sources, so a fresh clone and an edit need no build step.
// package.json's scripts run their entry points so: plain node, no TypeScript loader, ~1 CPU-s
// less per `npm run consumers` than through tsx (docs/testing.md).
import { resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { bundleModule } from './module-bundles.js';

const [, , entry] = process.argv;
if (!entry) {
  process.stderr.write('usage: node scripts/tools/run-bundled.js <entry.ts> [args…]\n');
  process.exit(2);
}
const source = resolve(entry);
// the entry sees the arguments it would see run directly: argv[1] its own path, then its own
process.argv.splice(1, 2, source);
await import(pathToFileURL(await bundleModule(source, 'process')).href);
