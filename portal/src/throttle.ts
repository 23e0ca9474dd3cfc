import type { Clock } from './clock.ts';

interface Entry {
  failures: number;
  /** No attempt is taken before this time (ms). */
  blockedUntil: number;
  lastFailure: number;
}

export interface ThrottlePolicy {
  /** Failures allowed before any wait. */
  freeFailures: number;
  /** The first wait; each further failure doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A key with no failure for this long starts again from zero. */
  forgetAfterMs: number;
}

/** Per account: 5 free tries, then 1 s, 2 s, 4 s… up to 15 min. */
export const PER_ACCOUNT: ThrottlePolicy = { freeFailures: 5, baseDelayMs: 1000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3600_000 };
/** Per client IP: more free tries (a shared address signs several people in), the same growth. */
export const PER_IP: ThrottlePolicy = { freeFailures: 20, baseDelayMs: 1000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3600_000 };

const MAX_ENTRIES = 100_000;

/**
 * Failed sign-ins slow the next attempts of the same key (an email, an IP): after
 * `freeFailures`, each failure blocks the key for a doubling wait. An attempt while blocked is
 * refused without checking the password, so guessing costs time, not CPU. In memory: one portal
 * process (several replicas would share it in their database; docs/portal.md).
 */
export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly policy: ThrottlePolicy,
    private readonly clock: Clock,
  ) {}

  /** Milliseconds until `key` may try again; 0 now. */
  waitMs(key: string): number {
    const entry = this.live(key);
    return entry ? Math.max(0, entry.blockedUntil - this.clock()) : 0;
  }

  fail(key: string): void {
    const now = this.clock();
    const entry = this.live(key) ?? { failures: 0, blockedUntil: 0, lastFailure: now };
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - this.policy.freeFailures;
    if (over > 0) entry.blockedUntil = now + Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (over - 1));
    this.entries.delete(key); // re-inserted last: the Map's order is the eviction order
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  succeed(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.clock() - entry.lastFailure > this.policy.forgetAfterMs && this.clock() >= entry.blockedUntil) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
