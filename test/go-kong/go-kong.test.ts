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
// Controller use, at the version decK v1.65.1 builds with, compiled once (npm run go-kong). Each
// selected test runs alone against a fresh local gateway whose kong.yml is empty, as go-kong's CI
// runs it against a fresh Kong; it must pass, not skip.

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

for (const name of selected) {
  test.serial(`go-kong ${goKong.version} ${name}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'go-kong-'));
    // The real clock: go-kong's key-auth test reads a ttl already counting down.
    const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir, now: Date.now });
    t.teardown(async () => {
      await gateway.dispose();
      rmSync(dir, { recursive: true, force: true });
    });
    const run = await promisify(execFile)(goKong.binary, ['-test.run', `^${name}$`, '-test.v', '-test.count=1', '-test.timeout=50s'], {
      env: { ...process.env, KONG_ADMIN_URL: gateway.adminUrl },
      encoding: 'utf8',
      maxBuffer: 4 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    const output = `${run.stdout}${run.stderr}`;
    const failures = output.split('\n').filter((line) => /^\s*(Error:|Error Trace:|--- FAIL|\s+HTTP status|panic)/.test(line));
    t.regex(output, new RegExp(`^--- PASS: ${name} `, 'm'), failures.join('\n') || output.slice(-2000));
    t.notRegex(output, new RegExp(`^--- SKIP: ${name} `, 'm'), 'a selected test must not skip: exclude it with its reason');
  });
}
