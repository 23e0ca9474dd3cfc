import type Router from '@koa/router';
import type { Context } from 'koa';
import { EMAIL_FIELD_UNITS, EmailTaken, isAccountEmail, NAME_FIELD_UNITS, NAME_MAX, normalizeEmail } from '../accounts.ts';
import { clearSessionCookie, setSessionCookie } from '../http/cookies.ts';
import { renewCsrf, sessionCsrf } from '../http/csrf.ts';
import { formField } from '../http/form.ts';
import { pageContext, sendPage } from '../http/state.ts';
import { invitationOnlyPage, signInPage, signUpPage, type SignUpForm } from '../pages/account-pages.ts';
import { keyShownPage } from '../pages/key-pages.ts';
import { HashSlotsFull } from '../hash-slots.ts';
import { passwordProblem, PASSWORD_FIELD_UNITS } from '../passwords.ts';
import type { SafeHtml } from '../html.ts';
import { BASE } from '../paths.ts';
import { codePoints, hasControl } from '../text.ts';
import type { PortalServices } from './services.ts';

const tooMany = (waitMs: number) => `Too many failed attempts. Try again in ${Math.ceil(waitMs / 1000)} seconds.`;
/** When every password hash slot is taken (hash-slots.ts): the client retries after a second. */
const BUSY_WAIT_MS = 1000;
const BUSY = 'Too many people are signing in right now. Try again in a second.';

/** 429 with Retry-After: the form is refused before any password is hashed or checked (throttled, or every hash slot taken). */
function throttled(ctx: Context, waitMs: number, page: () => SafeHtml): void {
  ctx.set('Retry-After', String(Math.ceil(waitMs / 1000)));
  sendPage(ctx, 429, page());
}

/** A new session in place of the one the request came with, if any: its cookie is replaced, so it would only linger. */
async function startSession(ctx: Context, services: PortalServices, accountId: string): Promise<void> {
  if (ctx.state.sessionId) await services.sessions.end(ctx.state.sessionId);
  const session = await services.sessions.create(accountId, services.clock());
  setSessionCookie(ctx, session.id, session.expiresAt - services.clock());
  renewCsrf(ctx);
  // the page answered now (a new key's) carries the new session's token
  ctx.state.sessionId = session.id;
  ctx.state.csrf = sessionCsrf(session.id);
}

/** Sign-up (open, or with an invitation), sign-in with failures slowed, sign-out. */
export function accountRoutes(router: Router, services: PortalServices): void {
  const { accounts, invites, keys, throttle, clock, audit } = services;

  /** The invitation's email, or the page that says why there is none; undefined in open mode. */
  async function invitation(ctx: Context, token: string): Promise<{ email?: string; refused: boolean }> {
    if (services.signUp === 'open' && token === '') return { refused: false };
    const email = token === '' ? undefined : await invites.emailOf(token, clock());
    if (email !== undefined) return { email, refused: false };
    const reason = token === '' ? 'This portal opens accounts by invitation only.' : 'This invitation link is not valid: it was used already, it expired, or it was mistyped.';
    sendPage(ctx, 403, invitationOnlyPage(pageContext(ctx), reason));
    return { refused: true };
  }

  router.get('/signup', async (ctx) => {
    const token = typeof ctx.query.invite === 'string' ? ctx.query.invite : '';
    const { email, refused } = await invitation(ctx, token);
    if (refused) return;
    sendPage(ctx, 200, signUpPage(pageContext(ctx), { email, invite: token || undefined }));
  });

  router.post('/signup', async (ctx) => {
    const token = formField(ctx, 'invite', 100);
    const { email: invited, refused } = await invitation(ctx, token);
    if (refused) return;
    const form: SignUpForm = {
      email: invited ?? formField(ctx, 'email', EMAIL_FIELD_UNITS).trim(),
      name: formField(ctx, 'name', NAME_FIELD_UNITS).trim(),
      invite: token || undefined,
    };
    const password = formField(ctx, 'password', PASSWORD_FIELD_UNITS);
    const again = (status: number, error: string) => sendPage(ctx, status, signUpPage(pageContext(ctx), { ...form, error }));
    // An address blocked for failed sign-ins cannot probe emails here either (below).
    const waitMs = await throttle.ip.waitMs(ctx.ip);
    if (waitMs > 0) {
      audit({ account: '-', action: 'sign-up-throttled', ip: ctx.ip });
      return throttled(ctx, waitMs, () => signUpPage(pageContext(ctx), { ...form, error: tooMany(waitMs) }));
    }
    if (!isAccountEmail(form.email!)) return again(400, 'Enter an email address such as you@example.com.');
    // a name may hold format characters: emoji sequences and some scripts join with U+200D and U+200C
    if (form.name === '' || codePoints(form.name!) > NAME_MAX || hasControl(form.name!)) {
      return again(400, `Enter a name of 1 to ${NAME_MAX} characters, without control characters.`);
    }
    const problem = passwordProblem(password, normalizeEmail(form.email!));
    if (problem) return again(400, problem);

    let passwordHash;
    try {
      passwordHash = await services.hashSlots.run(() => services.passwords.hash(password));
    } catch (error) {
      if (!(error instanceof HashSlotsFull)) throw error;
      audit({ account: '-', action: 'sign-up-busy', ip: ctx.ip });
      return throttled(ctx, BUSY_WAIT_MS, () => signUpPage(pageContext(ctx), { ...form, error: BUSY }));
    }
    let account;
    try {
      account = await accounts.create({ email: form.email!, name: form.name!, passwordHash, now: clock() });
    } catch (error) {
      if (error instanceof EmailTaken) {
        // Open sign-up answers this, as any sign-up that shows the key at once must (docs/portal.md,
        // "Sign-up and email enumeration"): each such answer counts as a failed sign-in of the
        // address, so probing emails here is slowed as guessing passwords is.
        await throttle.ip.fail(ctx.ip);
        audit({ account: '-', action: 'sign-up-email-taken', ip: ctx.ip });
        return again(409, 'An account with this email exists already: sign in instead.');
      }
      throw error;
    }
    // The invitation is spent only once the account exists; a race for it loses here.
    if (token !== '' && !(await invites.use(token, clock()))) {
      await accounts.delete(account.id);
      return sendPage(ctx, 403, invitationOnlyPage(pageContext(ctx), 'This invitation link was used already.'));
    }
    let issued;
    try {
      issued = await keys.createConsumer(account.id);
    } catch (error) {
      // no account without its consumer: the person can try again once the gateway answers
      await accounts.delete(account.id);
      if (token !== '') await invites.release(token);
      throw error;
    }
    await accounts.linkConsumer(account.id, issued.consumer);
    await startSession(ctx, services, account.id);
    ctx.state.account = { ...account, consumer: issued.consumer };
    audit({ account: account.id, action: 'sign-up', fingerprint: issued.fingerprint, ip: ctx.ip });
    sendPage(ctx, 201, keyShownPage(pageContext(ctx), issued, 'Your account is ready, on the free plan.', services.apiUrl));
  });

  router.get('/signin', (ctx) => {
    if (ctx.state.account) return ctx.redirect(`${BASE}/`);
    sendPage(ctx, 200, signInPage(pageContext(ctx), {}));
  });

  router.post('/signin', async (ctx) => {
    // read as sign-up reads it: a long address cut shorter here would never find its account
    const email = normalizeEmail(formField(ctx, 'email', EMAIL_FIELD_UNITS));
    const password = formField(ctx, 'password', PASSWORD_FIELD_UNITS);
    const waitMs = Math.max(await throttle.account.waitMs(email), await throttle.ip.waitMs(ctx.ip));
    if (waitMs > 0) {
      audit({ account: '-', action: 'sign-in-throttled', ip: ctx.ip });
      return throttled(ctx, waitMs, () => signInPage(pageContext(ctx), { email, error: tooMany(waitMs) }));
    }
    const found = await accounts.findForSignIn(email);
    let valid;
    try {
      valid = await services.hashSlots.run(async () =>
        services.passwords.verify(password, found?.passwordHash ?? (await services.passwords.unknownAccountHash())),
      );
    } catch (error) {
      // not a failed sign-in: no password was checked, so nothing is counted against the account
      if (!(error instanceof HashSlotsFull)) throw error;
      audit({ account: '-', action: 'sign-in-busy', ip: ctx.ip });
      return throttled(ctx, BUSY_WAIT_MS, () => signInPage(pageContext(ctx), { email, error: BUSY }));
    }
    if (!found || !valid) {
      await throttle.account.fail(email);
      await throttle.ip.fail(ctx.ip);
      audit({ account: found?.account.id ?? '-', action: 'sign-in-failed', ip: ctx.ip });
      return sendPage(ctx, 401, signInPage(pageContext(ctx), { email, error: 'The email or the password is wrong.' }));
    }
    await throttle.account.succeed(email);
    await startSession(ctx, services, found.account.id);
    audit({ account: found.account.id, action: 'sign-in', ip: ctx.ip });
    ctx.status = 303;
    ctx.redirect(`${BASE}/`);
  });

  router.post('/signout', async (ctx) => {
    if (ctx.state.sessionId) await services.sessions.end(ctx.state.sessionId);
    if (ctx.state.account) audit({ account: ctx.state.account.id, action: 'sign-out', ip: ctx.ip });
    clearSessionCookie(ctx);
    renewCsrf(ctx);
    ctx.status = 303;
    ctx.redirect(`${BASE}/signin`);
  });
}
