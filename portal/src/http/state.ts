import type { Context } from 'koa';
import type { Account } from '../accounts.ts';
import type { SafeHtml } from '../html.ts';
import type { PageContext } from '../pages/layout.ts';

declare module 'koa' {
  interface DefaultState {
    /** The signed-in account, set by the session middleware (app.ts). */
    account?: Account;
    /** The cookie's session id, when signed in. */
    sessionId?: string;
  }
}

/** What every page's layout needs from the request. */
export const pageContext = (ctx: Context): PageContext => ({ csrf: ctx.state.csrf, signedInAs: ctx.state.account?.email });

export function sendPage(ctx: Context, status: number, page: SafeHtml): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.text;
}
