import { html } from '../html.ts';
import { EMAIL_FIELD_UNITS, NAME_FIELD_UNITS } from '../accounts.ts';
import { PASSWORD_FIELD_UNITS, PASSWORD_MAX, PASSWORD_MIN } from '../passwords.ts';
import { BASE } from '../paths.ts';
import { csrfField, layout, notice, type PageContext } from './layout.ts';

export interface SignUpForm {
  email?: string;
  name?: string;
  /** The invitation token, carried through the form; its email is fixed. */
  invite?: string;
  error?: string;
}

/**
 * The email is a text field (inputmode email: the same keyboard): type="email" lets a browser submit
 * only ASCII before the @, so an address such as rené@example.com, which the portal takes, could
 * never be typed in. maxlength and minlength count UTF-16 code units, the portal code points (after
 * NFKC for a password): the pages' limits are what the server reads (…_FIELD_UNITS), never fewer, and
 * no minlength, so the browser never refuses what the portal takes; the portal's message says the rule.
 */
const emailInput = (autocomplete: string, value: string | undefined, readonly: boolean) =>
  html`<input id="email" name="email" type="text" inputmode="email" autocomplete="${autocomplete}" autocapitalize="none" spellcheck="false" required maxlength="${EMAIL_FIELD_UNITS}" value="${value ?? ''}"${readonly ? html` readonly` : ''}>`;

const passwordHint = `At least ${PASSWORD_MIN} characters, up to ${PASSWORD_MAX}; spaces and any characters welcome. A passphrase of a few words is easy to remember.`;

export function signUpPage(page: PageContext, form: SignUpForm) {
  return layout(
    'Create your account',
    page,
    html`<p>An account gives you an API key on the free plan at once.</p>
${notice(form.error)}
<form method="post" action="${BASE}/signup" class="stacked">
  ${csrfField(page)}
  ${form.invite ? html`<input type="hidden" name="invite" value="${form.invite}">` : ''}
  <label for="email">Email</label>
  ${emailInput('email', form.email, Boolean(form.invite))}
  <label for="name">Your name or your team's</label>
  <input id="name" name="name" type="text" autocomplete="name" required maxlength="${NAME_FIELD_UNITS}" value="${form.name ?? ''}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required maxlength="${PASSWORD_FIELD_UNITS}" aria-describedby="password-hint">
  <p id="password-hint" class="hint">${passwordHint}</p>
  <button type="submit">Create account and key</button>
</form>
<p>Already have an account? <a href="${BASE}/signin">Sign in</a>.</p>`,
  );
}

export function invitationOnlyPage(page: PageContext, reason: string) {
  return layout(
    'Sign-up is by invitation',
    page,
    html`${notice(reason, 'info')}
<p>Ask your Animal Store contact for an invitation link. Already have an account? <a href="${BASE}/signin">Sign in</a>.</p>`,
  );
}

export function signInPage(page: PageContext, form: { email?: string; error?: string }) {
  return layout(
    'Sign in',
    page,
    html`${notice(form.error)}
<form method="post" action="${BASE}/signin" class="stacked">
  ${csrfField(page)}
  <label for="email">Email</label>
  ${emailInput('username', form.email, false)}
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_FIELD_UNITS}">
  <button type="submit">Sign in</button>
</form>
<p>No account yet? <a href="${BASE}/signup">Sign up</a>.</p>`,
  );
}

/** An account whose consumer an admin deleted: signed in, but with no keys and no way to make one here. */
export function accountClosedPage(page: PageContext, supportEmail: string | undefined) {
  const ask = supportEmail
    ? html`If you think this is a mistake, write to <a href="mailto:${supportEmail}">${supportEmail}</a>.`
    : 'If you think this is a mistake, ask your Animal Store contact.';
  return layout(
    'Your API access is closed',
    page,
    html`${notice("An administrator closed this account's access to the API: its keys no longer work, and no key can be created, rotated or revoked here.")}
<p>${ask}</p>`,
  );
}

export function errorPage(page: PageContext, title: string, message: string) {
  return layout(title, page, html`${notice(message)}<p><a href="${BASE}/">Back to the portal</a></p>`);
}
