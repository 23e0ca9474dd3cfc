// ava's workers import this before their test file (ava.config.js, nodeArguments): see bundle-hooks.js.
import { register } from 'node:module';

register('./bundle-hooks.js', import.meta.url);
