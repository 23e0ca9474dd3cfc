import type { AccountStore } from '../accounts.ts';
import type { AuditLog } from '../audit.ts';
import type { Clock } from '../clock.ts';
import type { SignUpMode } from '../config.ts';
import type { HashSlots } from '../hash-slots.ts';
import type { InviteStore } from '../invites.ts';
import type { PortalKeys } from '../keys.ts';
import type { PasswordHasher } from '../passwords.ts';
import type { SessionStore } from '../sessions.ts';
import type { FailureThrottle } from '../throttle.ts';
import type { PortalUsage } from '../usage.ts';
import type { UsageCharts } from '../usage-charts.ts';

/** What the routes work with, made once by createPortalApp. */
export interface PortalServices {
  accounts: AccountStore;
  sessions: SessionStore;
  invites: InviteStore;
  keys: PortalKeys;
  usage: PortalUsage;
  charts: UsageCharts;
  throttle: { account: FailureThrottle; ip: FailureThrottle };
  /** The password hashes running at once, bounded: sign-up and sign-in hash through it. */
  hashSlots: HashSlots;
  passwords: PasswordHasher;
  clock: Clock;
  audit: AuditLog;
  signUp: SignUpMode;
  apiUrl: string;
  /** PORTAL_SUPPORT_EMAIL: where to ask for another plan. */
  supportEmail: string | undefined;
}
