// ava's workers load this once ava's own modules are loaded and before their test file
// (ava.config.js, require). See bundle-hooks.js.
import { register } from 'node:module';

register('./bundle-hooks.js', import.meta.url);
