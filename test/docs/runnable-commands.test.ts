// The docs' commands as a reader runs them (README, "The docs are tested"): every ```sh runnable
// block of README.md and docs/*.md runs against one `npm start` stack on ephemeral ports, the
// blocks of a file in one bash, in order, from the repository root, the files side by side. A
// command that fails names its file and line.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { deckBinary } from '../helpers/deck.ts';
import { REPO_ROOT, runToEnd, spawnTs, type SpawnedProcess } from '../helpers/process.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

const test = anyTest as TestFn<{ stack: SpawnedProcess; dir: string; env: NodeJS.ProcessEnv }>;

const DOCS = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

interface Block {
  /** 1-based line of the block's first command. */
  line: number;
  text: string;
  runnable: boolean;
}

/** The ```sh blocks of a Markdown file (``` fences may be indented, as in a list item). */
function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```sh( runnable)?\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    const indent = open[1]!.length;
    while (i + 1 < lines.length && !/^\s*```\s*$/.test(lines[i + 1]!)) i++;
    blocks.push({ line: start + 1, text: lines.slice(start, i + 1).map((l) => l.slice(indent)).join('\n'), runnable: open[2] !== undefined });
    i++;
  }
  return blocks;
}

/**
 * The file as one bash script whose line N is the file's line N: the runnable blocks' lines kept,
 * every other line blank, and an ERR trap that names the line that failed.
 */
function scriptOf(markdown: string): string {
  const lines = markdown.split('\n').map(() => '');
  for (const block of shellBlocks(markdown).filter((b) => b.runnable)) {
    block.text.split('\n').forEach((text, i) => (lines[block.line - 1 + i] = text));
  }
  lines[0] = `set -Eeuo pipefail; trap 'echo "doc-test: failed at line $LINENO" >&2' ERR; ${lines[0]}`;
  return lines.join('\n');
}

test.before(async (t) => {
  t.context.dir = mkdtempSync(join(tmpdir(), 'doc-commands-'));
  // The backend on a port of its own, told to npm run deck as to the stack: kong.yml's backend URL
  // is then what deck's defaults compute (BACKEND_PORT), as with npm start's 3000.
  const backendPort = String(await freePort());
  const portalPort = String(await freePort());
  const stack = spawnTs('scripts/stack/start.ts', [], {
    DATA_DIR: t.context.dir,
    BACKEND_PORT: backendPort,
    PORTAL_PORT: portalPort,
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    KONG_STATUS_LISTEN: '127.0.0.1:0',
    KONG_NGINX_WORKER_PROCESSES: '1',
  });
  t.context.stack = stack;
  const [, proxy] = await stack.waitFor(/proxy\s+(http:\/\/\S+)\/v1\s/, 60_000);
  const [, admin] = await stack.waitFor(/admin API\s+(http:\/\/\S+)\s/);
  const [, status] = await stack.waitFor(/status API\s+(http:\/\/\S+)\s/);
  await stack.waitFor(/kill -HUP \d+/);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(DECK_|KONG_|PROMETHEUS_URL$|RATE_LIMIT_|BACKEND_|DATA_DIR$|GATEWAY_URL$)/.test(name)),
  );
  t.context.env = {
    ...inherited,
    ANIMAL_STORE_URL: `${proxy}/v1`,
    KONG_ADMIN_URL: admin,
    KONG_STATUS_URL: status,
    BACKEND_PORT: backendPort,
    PORTAL_PORT: portalPort,
    PORTAL_DATA_DIR: t.context.dir,
    // decK's flags read DECK_<FLAG> too: no analytics from a test
    DECK_ANALYTICS: 'false',
  };
});

test.after.always(async (t) => {
  const { stack, dir } = t.context;
  if (stack) {
    stack.child.kill('SIGINT');
    await stack.exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const runnable = DOCS.filter((file) => shellBlocks(readFileSync(join(REPO_ROOT, file), 'utf8')).some((b) => b.runnable));

test('the walkthrough and the key docs commands are marked runnable', (t) => {
  // a marker lost in an edit shows here
  t.deepEqual(runnable, ['README.md', 'docs/api-keys.md', 'docs/development.md', 'docs/usage.md']);
});

for (const file of runnable) {
  // the files' blocks use consumers of their own, so the files run side by side
  test(`${file}: its runnable blocks run as written`, async (t) => {
    const markdown = readFileSync(join(REPO_ROOT, file), 'utf8');
    // npm run deck builds decK when it is missing (minutes): a missing decK fails here, in one line
    if (scriptOf(markdown).includes('npm run deck')) deckBinary();
    const result = await runToEnd('bash', ['-c', scriptOf(markdown)], t.context.env);
    const failed = /doc-test: failed at line (\d+)/.exec(result.stderr)?.[1];
    const where = failed ? `${file}:${failed}: ${markdown.split('\n')[Number(failed) - 1]!.trim()}` : file;
    t.is(result.code, 0, `${where}\n--- stdout\n${result.stdout.slice(-2000)}\n--- stderr\n${result.stderr.slice(-2000)}`);
  });
}

test('a failing command names its file and line', async (t) => {
  const markdown = '# t\n\n```sh runnable\ntrue\nfalse\ntrue\n```\n';
  const result = await runToEnd('bash', ['-c', scriptOf(markdown)], t.context.env);
  t.not(result.code, 0);
  t.regex(result.stderr, /doc-test: failed at line 5\n/);
});

test('data on stdout: npm run --silent prints the CSV only', async (t) => {
  // (the README's walkthrough pipes --json into JSON.parse, which fails on anything else)
  const csv = await runToEnd('bash', ['-c', 'npm run --silent consumers -- usage --status-url "$KONG_STATUS_URL" --format csv'], t.context.env);
  t.is(csv.code, 0, csv.stderr);
  t.is(csv.stdout.split('\n')[0], 'username,plan,limit_minute,limit_day,requests,2xx,4xx,429,5xx,other,banned,from,to,note');
});

test('documented pipes and redirections of npm run use --silent', (t) => {
  const offenders: string[] = [];
  for (const file of DOCS) {
    for (const block of shellBlocks(readFileSync(join(REPO_ROOT, file), 'utf8'))) {
      block.text.split('\n').forEach((text, i) => {
        const command = text.replace(/(^|\s)#.*$/, '');
        const dataOut = /\|(?!\|)|(?<![0-9&])>|\$\(\s*npm run/.test(command);
        if (dataOut && /npm run (?!--silent|-s\b)\S+ --/.test(command)) offenders.push(`${file}:${block.line + i}: ${text.trim()}`);
      });
    }
  }
  t.deepEqual(offenders, []);
});
