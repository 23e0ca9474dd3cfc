/** Backend settings from the environment; every variable is documented in docs/backend.md. */
export interface BackendConfig {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
}

export function readBackendConfig(env: NodeJS.ProcessEnv = process.env): BackendConfig {
  const port = Number(env.BACKEND_PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`BACKEND_PORT must be a port number, got ${JSON.stringify(env.BACKEND_PORT)}`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  // Anything else would silently fall back to the SQLite file: a replica set split across files.
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(`DATABASE_URL must be a postgres:// or postgresql:// URL, got one starting ${JSON.stringify(databaseUrl.split(':')[0])}`);
  }
  return { host: env.BACKEND_HOST ?? '127.0.0.1', port, dataDir: env.DATA_DIR ?? './data', databaseUrl };
}

/** readBackendConfig for entry points: a bad setting is one line on stderr and exit code 2. */
export function readBackendConfigOrExit(env: NodeJS.ProcessEnv = process.env): BackendConfig {
  try {
    return readBackendConfig(env);
  } catch (error) {
    console.error(`[backend] ${(error as Error).message}`);
    process.exit(2);
  }
}
