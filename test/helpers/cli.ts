import { spawn } from 'node:child_process';
import { REPO_ROOT } from './process.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real provisioning CLI (`npm run consumers -- …`) as a child process. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/consumers.ts', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, KONG_ADMIN_URL: undefined, KONG_ADMIN_HEADER: undefined, RATE_LIMIT_POLICY: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs the same CLI in this process through its `main(argv, io)` (scripts/lib/consumers-cli.ts):
 * same arguments, output and exit code, without a Node start per call. `env` is all it sees.
 */
export async function runCliInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const { main } = await import('../../scripts/lib/consumers-cli.ts');
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
