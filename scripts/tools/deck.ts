import { spawn } from 'node:child_process';
import { DeckBuildError, ensureDeck } from './deck-build.ts';
import { deckEnv } from './deck-env.ts';

/**
 * `npm run deck -- <args>`: the pinned decK, built once into a cache outside the repository.
 * kong.yml's DECK_* variables that are unset get the values `npm start` gives the local gateway,
 * named in one line on stderr, for commands that only read (docs/development.md, "decK"), so
 * `gateway diff gateway/kong.yml` runs as is against `npm start`.
 */
let defaults: ReturnType<typeof deckEnv>;
try {
  defaults = deckEnv(process.argv.slice(2), process.env);
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  process.exit(2);
}
let binary: string;
try {
  binary = ensureDeck((line) => console.error(line));
} catch (error) {
  console.error(`error: ${error instanceof DeckBuildError ? error.message : (error as Error).message}`);
  process.exit(1);
}
if (defaults.filled.length > 0) console.error(`[deck] unset, as npm start sets them: ${defaults.filled.join(' ')}`);
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', env: defaults.env });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(`error: cannot run ${binary}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
