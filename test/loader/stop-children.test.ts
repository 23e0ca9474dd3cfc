import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pollUntil } from '../helpers/poll.ts';
import { REPO_ROOT, running, runToEnd } from '../helpers/process.ts';

// test/loader/stop-children-on-sigterm.js: a file that times out leaves no process behind.
test('a worker ava stops for a timeout stops the processes its tests started', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-ava-timeout-'));
  const pidFile = join(dir, 'child.pid');
  let pid = 0;
  t.teardown(() => {
    if (pid > 0 && running(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const { code, stdout, stderr } = await runToEnd(
    process.execPath,
    [`${REPO_ROOT}node_modules/ava/entrypoints/cli.mjs`, '--config', 'test/fixtures/ava-timeout/ava.config.js', '--timeout', '3s'],
    { ...process.env, CHILD_PID_FILE: pidFile },
  );
  t.not(code, 0, 'the fixture times out');
  t.regex(stdout + stderr, /Timed out/);
  pid = Number(readFileSync(pidFile, 'utf8'));
  await t.notThrowsAsync(pollUntil(`sleep (pid ${pid}) to end with its worker`, async () => !running(pid), { timeoutMs: 5000 }));
});
