import type { Knex } from 'knex';
import type { Clock } from './clock.ts';

export interface ThrottlePolicy {
  /** Failures allowed before any wait. */
  freeFailures: number;
  /** The first wait; each further failure doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A subject with no failure for this long (and no wait left) starts again from zero. */
  forgetAfterMs: number;
}

/** Per account: 5 free tries, then 1 s, 2 s, 4 s… up to 15 min. */
export const PER_ACCOUNT: ThrottlePolicy = { freeFailures: 5, baseDelayMs: 1000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3600_000 };
/** Per client IP: more free tries (a shared address signs several people in), the same growth. */
export const PER_IP: ThrottlePolicy = { freeFailures: 20, baseDelayMs: 1000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3600_000 };

type Scope = 'account' | 'ip';

interface FailureRow {
  scope: Scope;
  subject: string;
  blocked_until: number | string;
}

const T = 'signin_failures';
// Every number is cast: PostgreSQL cannot infer a bare parameter's type inside CASE.
const n = (name: string) => `CAST(:${name} AS BIGINT)`;
/** No failure for forgetAfterMs and no wait left: the row counts as new. */
const STALE = `(${T}.last_failure < ${n('now')} - ${n('forget')} AND ${T}.blocked_until <= ${n('now')})`;
const FAILURES = `(CASE WHEN ${STALE} THEN 1 ELSE ${T}.failures + 1 END)`;
const PREVIOUS_DELAY = `(CASE WHEN ${STALE} THEN 0 ELSE ${T}.delay_ms END)`;
const DELAY = `(CASE WHEN ${FAILURES} <= ${n('free')} THEN 0 WHEN ${PREVIOUS_DELAY} = 0 THEN ${n('base')}
  WHEN ${PREVIOUS_DELAY} * 2 >= ${n('max')} THEN ${n('max')} ELSE ${PREVIOUS_DELAY} * 2 END)`;
/**
 * One statement per failure, the same on SQLite and PostgreSQL: the increment, the doubling and
 * the reset of a stale row happen inside the UPSERT, so failures counted at once on several
 * replicas all count (no read-modify-write between them). SET sees the row as it was.
 */
const FAIL_SQL = `INSERT INTO ${T} (scope, subject, failures, delay_ms, blocked_until, last_failure)
VALUES (:scope, :subject, 1, ${n('firstDelay')}, ${n('firstBlocked')}, ${n('now')})
ON CONFLICT (scope, subject) DO UPDATE SET
  failures = ${FAILURES},
  delay_ms = ${DELAY},
  blocked_until = CASE WHEN ${FAILURES} <= ${n('free')} THEN 0 ELSE ${n('now')} + ${DELAY} END,
  last_failure = ${n('now')}`;

/**
 * Failed sign-ins slow the next attempts of the same subject (an email, an IP): after
 * `freeFailures`, each failure blocks the subject for a doubling wait. An attempt while blocked
 * is refused without checking the password, so guessing costs time, not CPU. The counters live
 * in the portal's store, so every replica on it slows the same account and address.
 */
export class FailureThrottle {
  constructor(
    private readonly db: Knex,
    private readonly scope: Scope,
    private readonly policy: ThrottlePolicy,
    private readonly clock: Clock,
  ) {}

  /** Milliseconds until `subject` may try again; 0 now. */
  async waitMs(subject: string): Promise<number> {
    const row = await this.db<FailureRow>(T).where({ scope: this.scope, subject }).first('blocked_until');
    return row ? Math.max(0, Number(row.blocked_until) - this.clock()) : 0;
  }

  async fail(subject: string): Promise<void> {
    const now = this.clock();
    const { freeFailures: free, baseDelayMs: base, maxDelayMs: max, forgetAfterMs: forget } = this.policy;
    const firstDelay = 1 > free ? Math.min(base, max) : 0;
    await this.db.raw(FAIL_SQL, {
      scope: this.scope,
      subject,
      now,
      free,
      base,
      max,
      forget,
      firstDelay,
      firstBlocked: firstDelay > 0 ? now + firstDelay : 0,
    });
  }

  async succeed(subject: string): Promise<void> {
    await this.db(T).where({ scope: this.scope, subject }).delete();
  }

  /** Deletes the counters that would count as new anyway: keeps the table bounded. */
  async purgeStale(now: number): Promise<number> {
    return this.db(T)
      .where({ scope: this.scope })
      .andWhere('last_failure', '<', now - this.policy.forgetAfterMs)
      .andWhere('blocked_until', '<=', now)
      .delete();
  }
}
