// npm's install step for the addon: node-gyp against the headers of the Node that runs it, taken
// from its own installation prefix when it has them (Debian's nodejs, a tarball, nvm), so that
// nothing is downloaded. Where they are missing node-gyp falls back to its own logic (a download,
// which fails offline); the dependency is optional, so npm then goes on without it.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');

const prefix = dirname(dirname(process.execPath));
const args = ['rebuild'];
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const result = spawnSync('node-gyp', args, { stdio: 'inherit' });
if (result.error) console.error(`node-gyp could not be run (npm puts it on PATH for install scripts): ${result.error.message}`);
process.exit(result.status ?? 1);
