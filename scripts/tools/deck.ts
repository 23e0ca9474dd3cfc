import { spawn } from 'node:child_process';
import { DeckBuildError, ensureDeck } from './deck-build.ts';

/** `npm run deck -- <args>`: the pinned decK, built once into a cache outside the repository. */
let binary: string;
try {
  binary = ensureDeck((line) => console.error(line));
} catch (error) {
  console.error(`error: ${error instanceof DeckBuildError ? error.message : (error as Error).message}`);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(`error: cannot run ${binary}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
