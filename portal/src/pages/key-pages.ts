import type { Account } from '../accounts.ts';
import { html } from '../html.ts';
import type { KeyOverview, ShownKey } from '../keys.ts';
import { BASE } from '../paths.ts';
import type { AccountUsage } from '../usage.ts';
import { csrfField, layout, notice, type PageContext } from './layout.ts';

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

export function dashboardPage(
  page: PageContext,
  account: Account,
  overview: KeyOverview,
  usage: AccountUsage | { error: string },
  apiUrl: string,
  /** How many keys were just revoked (after the revoke form), for the notice. */
  revoked?: number,
) {
  const limits = overview.limits ? html`${overview.limits.minute} requests a minute, ${overview.limits.day} a day` : 'none set';
  return layout(
    `Hello, ${account.name}`,
    page,
    html`${revoked !== undefined ? notice(`${revoked} key(s) revoked: calls with them now get 401.`, 'info') : ''}
<section aria-labelledby="plan-h"><h2 id="plan-h">Plan</h2>
<p>Plan <strong>${overview.plan ?? 'none'}</strong>: ${limits}. Need more? Ask your Animal Store contact to move you to another plan.</p>
<p>API base URL: <code>${apiUrl}</code></p></section>
<section aria-labelledby="usage-h"><h2 id="usage-h">Usage</h2>${usageSection(usage)}</section>
<section aria-labelledby="keys-h"><h2 id="keys-h">Keys</h2>
<table><thead><tr><th scope="col">Fingerprint</th><th scope="col">Created</th><th scope="col">Expires</th></tr></thead><tbody>
${overview.keys.map(
  (key) => html`<tr><td><code>${key.fingerprint}</code></td><td>${when(key.createdAt)}</td><td>${key.expiresInSeconds === null ? 'never' : `in ${Math.ceil(key.expiresInSeconds / 60)} min`}</td></tr>`,
)}
</tbody></table>
${overview.keys.length === 0 ? notice('You have no key: rotating makes a new one.', 'info') : ''}
<form method="post" action="${BASE}/keys/rotate">${csrfField(page)}
<p>Rotating makes a new key, shown once; your current keys keep working for 24 hours so you can switch without downtime.</p>
<button type="submit">Rotate key</button></form>
<form method="post" action="${BASE}/keys/revoke">${csrfField(page)}
<p>Revoking stops every key of yours at once (a leaked key, say); rotate afterwards for a new one.</p>
<button type="submit" class="danger">Revoke all my keys now</button></form></section>`,
  );
}
