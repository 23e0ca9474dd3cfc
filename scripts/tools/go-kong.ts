import { ensureGoKongTests } from './go-kong-build.ts';

/**
 * `npm run go-kong`: builds go-kong's integration tests (the Go client decK uses, at decK's
 * version) once into the cache, for test/go-kong/. Prints where they are.
 */
try {
  const tests = ensureGoKongTests((line) => console.error(line));
  console.log(`go-kong ${tests.version}: ${tests.binary}`);
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
