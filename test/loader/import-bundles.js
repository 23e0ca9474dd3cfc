// ava's workers load this first (ava.config.js, require): ava then loads each test file with
// require() (`extensions: { ts: 'commonjs' }`), and the handler below answers that require() of a
// `.ts` file with the import of its esbuild bundle (scripts/tools/module-bundles.js: the file and
// every module of the repository it imports), built first when missing or stale. ava awaits what it
// loads, the import's promise included. No module hooks: on node 20 they start a loader thread and
// send every ES module through it, ~0.15-0.2 CPU-s a worker (docs/testing.md).
import Module from 'node:module';
import { pathToFileURL } from 'node:url';
import { bundleModule } from '../../scripts/tools/module-bundles.js';

Module._extensions['.ts'] = (module, filename) => {
  module.exports = bundleModule(filename).then((bundle) => import(pathToFileURL(bundle).href));
};
