import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';
import { titledFor } from './ava-titles.ts';

// imported as it is, not bundled: its paths are found from its own import.meta.url
const { groupFiles, membersOf, testFilePatterns } = (await import(
  pathToFileURL(join(REPO_ROOT, 'test/loader/worker-groups.js')).href
)) as typeof import('./worker-groups.js');

// test/loader/worker-groups.js: the groups of test/worker-groups/, each a worker shared by the files it imports.

const groups = groupFiles();
const members = groups.flatMap(membersOf);

/**
 * What a file's tests would share with the other files of its worker: ava's context and per-test
 * hooks (every file's before hooks fill one context; a beforeEach runs for every test of the
 * worker), and the process' environment and directory. Comments are left out.
 */
const SHARED_STATE = [/\bt\.context\b/, /\b(before|after)Each\b/, /process\.env(\.\w+|\[[^\]]+\])\s*=[^=]/, /\bdelete process\.env\b/, /process\.chdir\(/];

test('each group imports test files that exist, and no file is in two groups', (t) => {
  t.true(groups.length > 0);
  for (const group of groups) t.true(membersOf(group).length > 1, `${group} imports test files`);
  for (const member of members) t.true(existsSync(join(REPO_ROOT, member)), `${member} exists`);
  t.deepEqual(members.filter((member, index) => members.indexOf(member) !== index), [], 'no file in two groups');
  t.deepEqual(members.filter((member) => member.startsWith('test/worker-groups/')), [], 'no group in a group');
});

/** A test file and the modules of test/ it imports, directly or through others (repository-relative). */
function withTestHelpers(file: string, found = new Set<string>()): Set<string> {
  found.add(file);
  for (const [, specifier] of readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/^(?:import|export)\b[^']*'(\.\.?\/[^']+\.ts)';$/gm)) {
    const imported = posix.join(posix.dirname(file), specifier!);
    if (imported.startsWith('test/') && !found.has(imported)) withTestHelpers(imported, found);
  }
  return found;
}

test("a group's files, and the test helpers they import, keep their state to themselves", (t) => {
  for (const member of members) {
    for (const file of withTestHelpers(member)) {
      const code = readFileSync(join(REPO_ROOT, file), 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
      for (const pattern of SHARED_STATE) t.notRegex(code, pattern, `${file} (in ${member}) would share its state with its group`);
    }
  }
});

test("a whole run leaves a group's files to their group; a file named runs alone", (t) => {
  const excluded = (args: string[]) => testFilePatterns(args).filter((pattern) => pattern.startsWith('!'));
  t.deepEqual(excluded([]), members.map((member) => `!${member}`));
  t.deepEqual(excluded(['--match', '*acls*']), members.map((member) => `!${member}`));
  t.deepEqual(excluded([members[0] ?? '']), []);
  t.deepEqual(excluded(['test/gateway']), []);
  t.deepEqual(excluded([groups[0] ?? '']), membersOf(groups[0] ?? '').map((member) => `!${member}`));
});

const elsewhere = titledFor(pathToFileURL(join(REPO_ROOT, 'test/loader/elsewhere.test.ts')).href);

elsewhere('a test registered by a file in another file\'s worker is titled after its file', (t) => {
  t.is(t.title, "loader/elsewhere › a test registered by a file in another file's worker is titled after its file");
});

elsewhere.serial('the same through the chain', (t) => {
  t.is(t.title, 'loader/elsewhere › the same through the chain');
});

test('a file in its own worker registers with ava as it is', (t) => {
  t.is(titledFor(test.meta.file), test);
  t.is(t.title, 'a file in its own worker registers with ava as it is');
});
