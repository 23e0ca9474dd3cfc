import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { ensureGoKongTests } from '../../scripts/tools/go-kong-build.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { EXCLUDED, GO_KONG_FILES, GO_KONG_PICKED } from './selection.ts';

// go-kong's own integration tests, a judge beside decK: the Go client decK and the Kong Ingress
// Controller use, at the version decK v1.65.1 builds with, compiled once (npm run go-kong). The
// selected tests run in one go-kong run against one fresh local gateway whose kong.yml is empty, as
// go-kong's CI runs its package against one fresh Kong (.github/workflows/integration-test.yaml:
// "Setup Kong", then `make test-coverage`); each must pass, not skip. A test that fails may leave
// entities that fail a later one too: the first failure in go-kong's order is the one to read.

const goKong = ensureGoKongTests((line) => console.error(`[go-kong] ${line}`));
const picked = Object.values(GO_KONG_PICKED).flat();
const selected = [...GO_KONG_FILES.flatMap((file) => goKong.testsByFile[file] ?? []).filter((name) => !(name in EXCLUDED)), ...picked];

test('every test of the selected go-kong files runs or is excluded with its reason', (t) => {
  const all = GO_KONG_FILES.flatMap((file) => {
    const tests = goKong.testsByFile[file];
    t.truthy(tests, `${file} is in go-kong ${goKong.version}`);
    return tests ?? [];
  });
  t.deepEqual(Object.keys(EXCLUDED).filter((name) => !all.includes(name)), [], 'excluded tests that go-kong does not have');
  t.true(selected.length >= 25, `${selected.length} selected`);
  for (const [file, names] of Object.entries(GO_KONG_PICKED)) {
    t.deepEqual(names.filter((name) => !goKong.testsByFile[file]?.includes(name)), [], `picked tests that ${file} does not have`);
  }
});

/** go-kong's verbose output for one test: from its `=== RUN` line to its result line. */
function outputOf(output: string, name: string): string {
  const from = output.indexOf(`=== RUN   ${name}\n`);
  const result = new RegExp(`^\\s*--- (PASS|FAIL|SKIP): ${name} .*$`, 'm').exec(output.slice(Math.max(from, 0)));
  return from === -1 || !result ? '' : output.slice(from, from + result.index + result[0].length);
}

// One run for all (a gateway and a go-kong process per test were ~9 CPU-s more, docs/testing.md).
let run: Promise<string> | undefined;
function runSelected(): Promise<string> {
  run ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'go-kong-'));
    // The real clock: go-kong's key-auth test reads a ttl already counting down.
    const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir, now: Date.now });
    try {
      const result = await promisify(execFile)(goKong.binary, ['-test.run', `^(${selected.join('|')})$`, '-test.v', '-test.count=1', '-test.timeout=300s'], {
        env: { ...process.env, KONG_ADMIN_URL: gateway.adminUrl },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
      return `${result.stdout}${result.stderr}`;
    } finally {
      await gateway.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return run;
}

for (const name of selected) {
  test(`go-kong ${goKong.version} ${name}`, async (t) => {
    t.timeout(180_000);
    const all = await runSelected();
    const output = outputOf(all, name);
    const failures = output.split('\n').filter((line) => /^\s*(Error:|Error Trace:|--- FAIL|\s+HTTP status|panic)/.test(line));
    const why = failures.join('\n') || output.slice(-2000) || `no result for ${name} in go-kong's run; its end:\n${all.slice(-2000)}`;
    t.regex(output, new RegExp(`^--- PASS: ${name} `, 'm'), why);
    t.notRegex(output, new RegExp(`^--- SKIP: ${name} `, 'm'), 'a selected test must not skip: exclude it with its reason');
  });
}
