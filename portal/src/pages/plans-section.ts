import { html } from '../html.ts';
import { PLAN_NAMES, type Catalogue, type PlanName } from '../../../packages/provisioning/index.ts';

const SUBJECT = encodeURIComponent('Another plan for my Animal Store API account');

/** How to ask for another plan: admins change plans with the CLI, so the account writes to them. */
function howToAsk(supportEmail: string | undefined, signedInAs: string) {
  if (!supportEmail) return html`<p>To move to another plan, ask your Animal Store contact, naming the account <strong>${signedInAs}</strong> and the plan you want.</p>`;
  const body = encodeURIComponent(`Account: ${signedInAs}\nPlan I would like: \nWhy: `);
  return html`<p>To move to another plan, write to <a href="mailto:${supportEmail}?subject=${SUBJECT}&amp;body=${body}">${supportEmail}</a>
 naming the account <strong>${signedInAs}</strong> and the plan you want; an administrator changes it, and your keys keep working.</p>`;
}

/** The plan catalogue (gateway/plans.yaml), the account's own plan marked. */
export function plansSection(catalogue: Catalogue, current: PlanName | null, supportEmail: string | undefined, signedInAs: string) {
  return html`<section aria-labelledby="plans-h"><h2 id="plans-h">Plans</h2>
<table><thead><tr><th scope="col">Plan</th><th scope="col">Requests a minute</th><th scope="col">Requests a day</th></tr></thead><tbody>
${PLAN_NAMES.map((name) => {
  const limits = catalogue.plans[name];
  const label = name === current ? html`<strong>${name}</strong> (yours)` : name;
  return 'custom' in limits
    ? html`<tr><th scope="row">${label}</th><td colspan="2">agreed with you</td></tr>`
    : html`<tr><th scope="row">${label}</th><td>${limits.minute}</td><td>${limits.day}</td></tr>`;
})}
</tbody></table>
${howToAsk(supportEmail, signedInAs)}</section>`;
}
