// `npm run consumers -- <command>`: the provisioning CLI (scripts/cli/program.ts) on this
// process's arguments, environment and streams.
import { main } from './program.ts';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
