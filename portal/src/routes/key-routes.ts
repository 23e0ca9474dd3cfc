import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { pageContext, sendPage } from '../http/state.ts';
import { dashboardPage, keyShownPage } from '../pages/key-pages.ts';
import { BASE } from '../paths.ts';
import type { PortalServices } from './services.ts';

/** Pages for signed-in accounts only: the others go to sign-in (a POST is refused). */
async function signedIn(ctx: Context, next: Next): Promise<void> {
  if (ctx.state.account?.consumer) {
    await next();
    return;
  }
  if (ctx.method === 'POST') ctx.status = 303;
  ctx.redirect(`${BASE}/signin`);
}

/** The dashboard (plan, limits, usage, keys) and key rotation, for the signed-in account's own consumer only. */
export function keyRoutes(router: Router, services: PortalServices): void {
  router.get('/', signedIn, async (ctx) => {
    const account = ctx.state.account!;
    const overview = await services.keys.overview(account.consumer!);
    const usage = await services.usage.of(account.consumer!, overview.consumerId).catch((error: Error) => ({ error: error.message }));
    const revoked = typeof ctx.query.revoked === 'string' && /^\d{1,4}$/.test(ctx.query.revoked) ? Number(ctx.query.revoked) : undefined;
    sendPage(ctx, 200, dashboardPage(pageContext(ctx), account, overview, usage, services.apiUrl, revoked));
  });

  router.post('/keys/rotate', signedIn, async (ctx) => {
    const account = ctx.state.account!;
    const rotated = await services.keys.rotate(account.consumer!);
    services.audit({ account: account.id, action: 'rotate-key', fingerprint: rotated.fingerprint, ip: ctx.ip });
    const what = `A new key is ready. Your ${rotated.previousKeys === 1 ? 'previous key keeps' : `${rotated.previousKeys} previous keys keep`} working for 24 hours.`;
    sendPage(ctx, 200, keyShownPage(pageContext(ctx), rotated, what, services.apiUrl));
  });

  // Only the signed-in account's own consumer: no route takes a key's or a consumer's id.
  router.post('/keys/revoke', signedIn, async (ctx) => {
    const account = ctx.state.account!;
    const revoked = await services.keys.revokeAll(account.consumer!);
    services.audit({ account: account.id, action: 'revoke-keys', ip: ctx.ip });
    ctx.status = 303;
    ctx.redirect(`${BASE}/?revoked=${revoked}`);
  });
}
