// ava's workers load this once ava's own modules are loaded and before their test file
// (ava.config.js, require); processes the tests start import it first (test/helpers/process.ts,
// TS_LOADER). See bundle-hooks.js.
import { register } from 'node:module';

register('./bundle-hooks.js', import.meta.url);
