// The developer portal in a real browser (issue 32): Debian's chromium driven by puppeteer-core,
// through the local gateway. Sign up, copy the key with the page's button, call GET /v1/pets with
// what the clipboard holds, see the request in the usage, rotate, revoke, 401. Every page is checked with
// axe-core (no serious or critical violation) and by the browser's CSP (no violation reported);
// a screenshot of each is kept in test-artifacts/portal/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { REPO_ROOT } from '../helpers/process.ts';
import { startPortalBehindGateway, type TestPortal } from '../helpers/portal.ts';
import type { TestStack } from '../helpers/stack.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'portal');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let stack: TestStack;
let portal: TestPortal;
let browser: Browser;

test.before(async () => {
  ({ stack, portal } = await startPortalBehindGateway());
  // --no-sandbox: the tests run as root on our machines and CI, where chromium's sandbox refuses to start
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  mkdirSync(ARTIFACTS, { recursive: true });
});

test.after.always(async () => {
  await browser?.close();
  await portal?.dispose();
  await stack?.dispose();
});

interface AxeRun {
  run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
}

/** axe-core's serious and critical violations on the page, as "rule: target" lines. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  // evaluated through the DevTools protocol, which the page's CSP does not govern
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: AxeRun }).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
}

/**
 * The dashboard's usage charts (issue 32): uPlot, served by the portal, has drawn both from the
 * portal's JSON; each says in text what it shows. The page's own checks (axe, CSP) then cover them.
 */
async function usageChartsDrawn(t: ExecutionContext, page: Page, oneRequest: string): Promise<void> {
  await page.waitForSelector('[data-usage-charts][data-charts=drawn]');
  t.is(await page.$$eval('[data-usage-charts] .chart canvas', (canvases) => canvases.length), 2, 'both charts drawn');
  const totals = await page.$$eval('[data-chart-totals]', (lines) => lines.map((line) => line.textContent));
  t.deepEqual(totals, [oneRequest, oneRequest], 'the request shows in the 24 h and the 7 day chart');
}

test('sign up, copy the key, call the API with it, see it in the usage, rotate, revoke, create a named key: every page accessible, no CSP violation', async (t) => {
  const origin = stack.gateway.proxyUrl;
  const context = await browser.createBrowserContext();
  await context.overridePermissions(origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  const check = async (name: string) => {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    t.deepEqual(await accessibilityProblems(page), [], `axe on ${name}`);
  };

  await page.goto(`${origin}/portal/signup`);
  await check('1-sign-up');
  await page.type('#email', 'browser@example.com');
  await page.type('#name', 'Browser <b>Tester</b>');
  await page.type('#password', 'a long enough browser passphrase');
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);

  t.is(await page.$eval('h1', (h) => h.textContent), 'Your API key');
  await check('2-key-shown');
  const shown = await page.$eval('#api-key', (input) => (input as HTMLInputElement).value);
  t.regex(shown, /^ask_/);
  await page.click('button[data-copy]');
  await page.waitForFunction(() => document.querySelector('.copied')?.textContent === 'Copied to the clipboard.');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  t.is(copied, shown, 'the copy button put the key on the clipboard');

  t.is((await stack.call('/v1/pets', { key: copied })).status, 200);

  await page.goto(`${origin}/portal/`);
  t.is(await page.$eval('h1', (h) => h.textContent), 'Hello, Browser <b>Tester</b>', 'the name shown as text');
  const totals = await page.$$eval('table caption', (captions) =>
    captions.filter((c) => c.textContent === 'Requests since the gateway started').map((c) => [...c.closest('table')!.querySelectorAll('td')].map((td) => td.textContent)),
  );
  t.deepEqual(totals, [['1', '1', '0', '0', '0']], 'the request shows in the usage');
  await usageChartsDrawn(t, page, 'In all: 1 request (2xx 1, 4xx (not 429) 0, 429 (plan limit) 0).');
  await check('3-dashboard');

  await Promise.all([page.waitForNavigation(), page.click('form[action="/portal/keys/rotate"] button')]);
  const rotated = await page.$eval('#api-key', (input) => (input as HTMLInputElement).value);
  t.not(rotated, shown);
  await check('4-key-rotated');
  t.is((await stack.call('/v1/pets', { key: shown })).status, 200, 'the old key works during the grace period');
  t.is((await stack.call('/v1/pets', { key: rotated })).status, 200);

  await page.goto(`${origin}/portal/`);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/portal/keys/revoke"] button')]);
  t.regex(await page.$eval('main', (main) => main.textContent ?? ''), /2 key\(s\) revoked/);
  await check('5-keys-revoked');
  t.is((await stack.call('/v1/pets', { key: rotated })).status, 401, 'revoked: 401');
  t.is((await stack.call('/v1/pets', { key: shown })).status, 401);

  // another key from the dashboard's form: named, read-only on pets, 30 days
  await page.type('#key-name', 'ci');
  await page.click('input[name=scope][value="pets:read"]');
  await page.select('#key-expires', '30');
  await Promise.all([page.waitForNavigation(), page.click('form[action="/portal/keys"] button[type=submit]')]);
  const named = await page.$eval('#api-key', (input) => (input as HTMLInputElement).value);
  await check('6-key-created');
  t.is((await stack.call('/v1/pets', { key: named })).status, 200);
  t.is((await stack.call('/v1/pets', { key: named, method: 'POST', json: { name: 'Rex' } })).status, 403, 'pets:read only');
  await page.goto(`${origin}/portal/`);
  t.regex(await page.$eval('section[aria-labelledby=keys-h] tbody', (body) => body.textContent ?? ''), /ci[0-9a-f]{8}pets:read/);

  await Promise.all([page.waitForNavigation(), page.click('nav form button')]);
  t.is(new URL(page.url()).pathname, '/portal/signin');
  await check('7-sign-in');
  t.deepEqual(cspViolations, []);
  await context.close();
});
