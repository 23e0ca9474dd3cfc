import type { Account } from '../accounts.ts';
import { html } from '../html.ts';
import { ROTATION_GRACE_SECONDS, type KeyOverview, type ShownKey } from '../keys.ts';
import { SCOPES, type Catalogue, type KeySummary } from '../../../packages/provisioning/index.ts';
import { BASE } from '../paths.ts';
import type { AccountUsage } from '../usage.ts';
import { csrfField, layout, notice, type PageContext } from './layout.ts';
import { plansSection } from './plans-section.ts';
import { usageChartSection } from './usage-chart-section.ts';

const when = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');

/** The one response that ever holds the key: the copy button is assets/copy.js. */
export function keyShownPage(page: PageContext, shown: ShownKey, what: string, apiUrl: string) {
  return layout(
    'Your API key',
    page,
    html`${notice(what, 'info')}
<p><strong>Copy it now: it is shown only on this page.</strong> We keep only a fingerprint of it; if you lose it, rotate it from your dashboard.</p>
<div class="key">
  <label for="api-key">API key (fingerprint ${shown.fingerprint})</label>
  <input id="api-key" type="text" readonly value="${shown.key}" spellcheck="false" autocomplete="off">
  <button type="button" data-copy="api-key">Copy key</button>
  <span class="copied" role="status" aria-live="polite"></span>
</div>
<p>Try it:</p>
<pre tabindex="0"><code>curl -si ${apiUrl}/pets -H 'Authorization: Bearer ${shown.key}'</code></pre>
<p><a href="${BASE}/reference" data-hand-key="api-key">Use it in the API reference</a>: "try it" there with this key, in this tab only, until you sign out.</p>
<p><a href="${BASE}/">Go to your dashboard</a></p>`,
  );
}

function usageSection(usage: AccountUsage | { error: string }) {
  if ('error' in usage) return notice(`Usage is not available right now: ${usage.error}`, 'info');
  const { windows, totals } = usage;
  const current = windows.readable
    ? html`<table><caption>Current windows</caption><thead><tr><th scope="col">Window</th><th scope="col">Used</th><th scope="col">Limit</th><th scope="col">Resets</th></tr></thead><tbody>
${[['This minute', windows.minute] as const, ['Today (UTC)', windows.day] as const].map(([label, count]) =>
  count ? html`<tr><th scope="row">${label}</th><td>${count.used}</td><td>${count.limit}</td><td>${count.resetsAt}</td></tr>` : '',
)}</tbody></table>`
    : html`<p class="hint">The current minute and day are counted inside the gateway (${windows.reason}); the response headers
 <code>X-RateLimit-Remaining-Minute</code> and <code>-Day</code> of each call show them.</p>`;
  const since =
    'error' in totals
      ? notice(`Request totals are not available: ${totals.error}`, 'info')
      : html`<table><caption>Requests since the gateway started</caption><thead><tr><th scope="col">All</th><th scope="col">2xx</th><th scope="col">4xx</th><th scope="col">429</th><th scope="col">5xx</th></tr></thead>
<tbody><tr>${[totals.counts?.requests, totals.counts?.['2xx'], totals.counts?.['4xx'], totals.counts?.['429'], totals.counts?.['5xx']].map((n) => html`<td>${n ?? 0}</td>`)}</tr></tbody></table>`;
  return html`${current}${since}`;
}

/** Time left, to the unit that matters: days, then hours, then minutes. */
function timeLeft(seconds: number): string {
  if (seconds >= 2 * 86400) return `${Math.floor(seconds / 86400)} days`;
  if (seconds >= 2 * 3600) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.max(1, Math.ceil(seconds / 60))} min`;
}

/** What the page of a rotated key says of the key it replaced. */
export function replacedKeyNote(previousKeysUntil: number | null, nowSeconds: number): string {
  if (previousKeysUntil === null) return 'The key it replaces no longer works.';
  return `The key it replaces keeps working until ${when(previousKeysUntil)} (in ${timeLeft(Math.max(0, previousKeysUntil - nowSeconds))}).`;
}

function expiry(key: KeySummary) {
  if (key.expiresInSeconds === null || key.expiresAt === null) return key.replaced ? 'replaced' : 'never';
  const until = `${when(key.expiresAt)} (in ${timeLeft(key.expiresInSeconds)})`;
  return key.replaced ? `replaced, works until ${until}` : until;
}

/** Rotate and revoke forms of one key, by name: the only thing they say is which of the account's own keys. */
function keyActions(page: PageContext, key: KeySummary) {
  if (key.replaced) return html`<span class="hint">revoking ${key.name} stops it too</span>`;
  return html`<form method="post" action="${BASE}/keys/rotate" class="inline">${csrfField(page)}<input type="hidden" name="name" value="${key.name}">
<button type="submit">Rotate ${key.name}</button></form>
<form method="post" action="${BASE}/keys/revoke" class="inline">${csrfField(page)}<input type="hidden" name="name" value="${key.name}">
<button type="submit" class="danger">Revoke ${key.name}</button></form>`;
}

/** What the create form had, to show it again beside an error. */
export interface NewKeyForm {
  name: string;
  scopes: string[];
  expires: string;
}

export const EXPIRY_CHOICES = [
  ['never', 'Never'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
] as const;

function newKeyForm(page: PageContext, form: NewKeyForm) {
  return html`<form method="post" action="${BASE}/keys" class="stacked">${csrfField(page)}
<h3>Create another key</h3>
<label for="key-name">Name</label>
<input id="key-name" name="name" required maxlength="40" pattern="[a-z0-9][a-z0-9._\\-]{0,39}" value="${form.name}" aria-describedby="key-name-hint">
<p class="hint" id="key-name-hint">1 to 40 of a-z, 0-9, '.', '_' and '-', unlike your other keys' names (ci, mobile-app…).</p>
<fieldset><legend>Scopes (none ticked: the key may do everything)</legend>
${SCOPES.map(
  (scope) => html`<label><input type="checkbox" name="scope" value="${scope}"${form.scopes.includes(scope) ? html` checked` : ''}> ${scope}</label> `,
)}</fieldset>
<label for="key-expires">Expires</label>
<select id="key-expires" name="expires">
${EXPIRY_CHOICES.map(([value, label]) => html`<option value="${value}"${form.expires === value ? html` selected` : ''}>${label}</option>`)}
</select>
<button type="submit">Create key</button></form>`;
}

export interface DashboardView {
  overview: KeyOverview;
  usage: AccountUsage | { error: string };
  apiUrl: string;
  catalogue: Catalogue;
  supportEmail: string | undefined;
  /** The outcome of the last action (a revocation) or why it was refused. */
  message?: { text: string; kind: 'error' | 'info' };
  /** The create form as it was sent, when it was refused. */
  form?: NewKeyForm;
}

export function dashboardPage(page: PageContext, account: Account, view: DashboardView) {
  const { overview, usage, apiUrl } = view;
  const limits = overview.limits ? html`${overview.limits.minute} requests a minute, ${overview.limits.day} a day` : 'none set';
  return layout(
    `Hello, ${account.name}`,
    page,
    html`${view.message ? notice(view.message.text, view.message.kind) : ''}
<section aria-labelledby="plan-h"><h2 id="plan-h">Plan</h2>
<p>Plan <strong>${overview.plan ?? 'none'}</strong>: ${limits}. Other plans and how to ask for one are below.</p>
<p>API base URL: <code>${apiUrl}</code></p></section>
<section aria-labelledby="usage-h"><h2 id="usage-h">Usage</h2>${usageSection(usage)}${usageChartSection()}</section>
<section aria-labelledby="keys-h"><h2 id="keys-h">Keys</h2>
<table><thead><tr><th scope="col">Name</th><th scope="col">Fingerprint</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead><tbody>
${overview.keys.map(
  (key) =>
    html`<tr><td>${key.name}</td><td><code>${key.fingerprint}</code></td><td>${key.scopes.length === 0 ? 'all' : key.scopes.join(', ')}</td><td>${when(key.createdAt)}</td><td>${expiry(key)}</td><td>${keyActions(page, key)}</td></tr>`,
)}
</tbody></table>
${overview.keys.length === 0 ? notice('You have no key: create one below.', 'info') : ''}
<p class="hint">Rotating makes a new key of the same name, scopes and expiry, shown once; the old one keeps working for ${ROTATION_GRACE_SECONDS / 3600} hours so you can switch without downtime.
Revoking stops a key at once (a leaked key, say).</p>
${newKeyForm(page, view.form ?? { name: '', scopes: [], expires: 'never' })}</section>
${plansSection(view.catalogue, overview.plan, view.supportEmail, page.signedInAs ?? account.email)}`,
  );
}
