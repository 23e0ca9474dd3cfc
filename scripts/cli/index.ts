// The consumers CLI's public entry, for its tests and for whatever runs it in-process: the
// command line in, an exit code out (program.ts); `consumers.ts` runs it on this process.
export { main } from './program.ts';
