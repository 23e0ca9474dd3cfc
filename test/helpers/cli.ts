import { RUN_BUNDLED, runToEnd, type ProcessResult } from './process.ts';

export type CliResult = ProcessResult;

/** Runs the real provisioning CLI (`npm run consumers -- …`) as a child process. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runToEnd(process.execPath, [RUN_BUNDLED, 'scripts/cli/consumers.ts', ...args], {
    ...process.env,
    KONG_ADMIN_URL: undefined,
    KONG_ADMIN_HEADER: undefined,
    KONG_ADMIN_TIMEOUT: undefined,
    RATE_LIMIT_POLICY: undefined,
    ...env,
  });
}

/**
 * Runs the same CLI in this process through its `main(argv, io)` (scripts/cli/program.ts):
 * same arguments, output and exit code, without a Node start per call. `env` is all it sees.
 */
export async function runCliInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const { main } = await import('../../scripts/cli/index.ts');
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
