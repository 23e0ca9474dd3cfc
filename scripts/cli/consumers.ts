// `npm run consumers -- <command>`: the provisioning CLI (scripts/cli/program.ts) on this
// process's arguments, environment and streams.
import { main } from './program.ts';

// A reader that stops early (`| head`) closes the pipe: the output is no longer wanted, which is
// not an error to report. Whatever the command was doing has already been sent to the Admin API.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
