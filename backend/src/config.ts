/** Backend settings from the environment; every variable is documented in README.md. */
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
  return {
    host: env.BACKEND_HOST ?? '127.0.0.1',
    port,
    dataDir: env.DATA_DIR ?? './data',
    databaseUrl: env.DATABASE_URL || undefined,
  };
}
