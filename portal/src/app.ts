import { METHODS } from 'node:http';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { Knex } from 'knex';
import { AccountStore } from './accounts.ts';
import { consoleAudit, type AuditLog } from './audit.ts';
import { systemClock, type Clock } from './clock.ts';
import { DEFAULT_KEYS_PER_ACCOUNT, type PortalConfig } from './config.ts';
import { assetRoutes } from './http/assets.ts';
import { vendorAssetRoutes } from './http/vendor-assets.ts';
import { clearSessionCookie, readSignedCookie, SESSION_COOKIE } from './http/cookies.ts';
import { csrfProtection } from './http/csrf.ts';
import { securityHeaders } from './http/security-headers.ts';
import { utf8Forms } from './http/utf8-form.ts';
import { pageContext, sendPage } from './http/state.ts';
import { HashSlots, type HashSlotLimits } from './hash-slots.ts';
import { InviteStore } from './invites.ts';
import { KeyChanges } from './key-changes.ts';
import { isPortalConsumer, PortalKeys } from './keys.ts';
import { errorPage } from './pages/account-pages.ts';
import { PasswordHasher, type ScryptCost } from './passwords.ts';
import { BASE } from './paths.ts';
import { accountRoutes } from './routes/account-routes.ts';
import { keyRoutes } from './routes/key-routes.ts';
import { referenceRoutes } from './routes/reference-routes.ts';
import { usageChartRoutes } from './routes/usage-chart-routes.ts';
import type { PortalServices } from './routes/services.ts';
import { SessionStore } from './sessions.ts';
import { FailureThrottle, PER_ACCOUNT, PER_IP } from './throttle.ts';
import { PortalUsage } from './usage.ts';
import { usageCharts, type UsageCharts } from './usage-charts.ts';
import { ProvisioningError } from '../../packages/provisioning/index.ts';

export interface PortalAppOptions {
  db: Knex;
  config: Pick<PortalConfig, 'signUp' | 'apiUrl' | 'adminUrl' | 'adminHeaders' | 'statusUrls' | 'supportEmail' | 'prometheusUrl' | 'usageSampleSeconds' | 'keysPerAccount'> & { cookieSecret: string };
  /** The usage charts' source (startPortal starts its sampling); default: the one the config chooses, sampled on read only. */
  charts?: UsageCharts;
  clock?: Clock;
  audit?: AuditLog;
  logError?: (error: unknown, where: string) => void;
  /** Password hashes at once and waiting (hash-slots.ts); default DEFAULT_HASH_SLOTS. */
  hashSlots?: HashSlotLimits;
  /** The cost of new password hashes (passwords.ts); default SCRYPT_COST. */
  passwordCost?: ScryptCost;
}

const FORM_LIMIT = '16kb';

const defaultLogError = (error: unknown, where: string) => console.error(`[portal] unhandled error on ${where}:`, error);

/** Pages for failures: a client's mistake keeps its 4xx; the gateway's absence is 503; anything else 500, logged, never shown. */
function errorPages(logError: (error: unknown, where: string) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) sendPage(ctx, 404, errorPage(pageContext(ctx), 'Page not found', `Nothing is at ${ctx.path}.`));
    } catch (error) {
      const status = (error as { status?: unknown; expose?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: unknown }).expose) {
        sendPage(ctx, status, errorPage(pageContext(ctx), 'Request refused', (error as Error).message));
      } else if (error instanceof ProvisioningError && error.code === 'admin-api-unreachable') {
        logError(error, `${ctx.method} ${ctx.path}`);
        sendPage(ctx, 503, errorPage(pageContext(ctx), 'Try again soon', 'The gateway cannot be reached right now. Please try again in a minute.'));
      } else {
        logError(error, `${ctx.method} ${ctx.path}`);
        sendPage(ctx, 500, errorPage(pageContext(ctx), 'Something went wrong', 'We could not finish this. Please try again; nothing was changed twice.'));
      }
    }
  };
}

/** Loads the signed-in account from the session cookie; an unknown or expired session clears it. */
function sessions(services: PortalServices): Middleware {
  return async (ctx: Context, next) => {
    const id = readSignedCookie(ctx, SESSION_COOKIE);
    if (id) {
      const account = await services.sessions.accountOf(id, services.clock());
      if (account) {
        ctx.state.account = account;
        ctx.state.sessionId = id;
      } else {
        clearSessionCookie(ctx);
      }
    }
    await next();
  };
}

/** The developer portal: server-rendered pages under /portal (paths.ts), behind the gateway. */
export function createPortalApp(options: PortalAppOptions): Koa {
  const { db, config, clock = systemClock, audit = consoleAudit, logError = defaultLogError } = options;
  const app = new Koa({ keys: [config.cookieSecret] });
  // Behind the gateway: the client's address is the last one Kong appended to X-Forwarded-For.
  app.proxy = true;
  app.maxIpsCount = 1;
  const admin = { url: config.adminUrl, ...(config.adminHeaders ? { headers: config.adminHeaders } : {}) };
  const services: PortalServices = {
    accounts: new AccountStore(db),
    sessions: new SessionStore(db),
    invites: new InviteStore(db),
    keys: new PortalKeys(admin, new KeyChanges(db), config.keysPerAccount ?? DEFAULT_KEYS_PER_ACCOUNT),
    usage: new PortalUsage(config.statusUrls, process.env),
    charts: options.charts ?? usageCharts(config, clock, isPortalConsumer),
    throttle: { account: new FailureThrottle(db, 'account', PER_ACCOUNT, clock), ip: new FailureThrottle(db, 'ip', PER_IP, clock) },
    hashSlots: new HashSlots(options.hashSlots),
    passwords: new PasswordHasher(options.passwordCost),
    clock,
    audit,
    signUp: config.signUp,
    apiUrl: config.apiUrl,
    supportEmail: config.supportEmail,
  };

  // Every method Node's parser accepts is known, so a path answers one it does not serve 405 with
  // Allow, as the backend does; the router's default list would make PROPFIND, PURGE… a 501.
  const router = new Router({ prefix: BASE, methods: [...METHODS] });
  assetRoutes(router);
  accountRoutes(router, services);
  keyRoutes(router, services);
  vendorAssetRoutes(router);
  referenceRoutes(router, config.apiUrl);
  usageChartRoutes(router, services);

  app.use(securityHeaders);
  app.use(errorPages(logError));
  app.use(utf8Forms(FORM_LIMIT));
  app.use(koaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: FORM_LIMIT }));
  app.use(sessions(services));
  app.use(csrfProtection((ctx, reason) => sendPage(ctx, 403, errorPage(pageContext(ctx), 'Form refused', reason))));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
