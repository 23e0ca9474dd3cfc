// The backend's public entry, for what runs it in-process (tests, benchmarks): the server, the
// Koa app it serves, its settings, the database it opens, and the error codes of the contract.
// backend/src/main.ts is the process; nothing outside backend/ imports another file of src/.
export { createApp, type AppOptions } from './app.ts';
export { readBackendConfig } from './config.ts';
export { openDatabase } from './db/connect.ts';
export { ErrorCode } from './http/errors.ts';
export { startBackend, type RunningBackend } from './server.ts';
