import type { CounterStore } from '../plugins/plugin.ts';

/** A shared-dict-like counter table with per-key expiry, swept as it grows (node-local, like Kong's). */
export class ExpiringCounters implements CounterStore {
  private readonly values = new Map<string, { count: number; expiresAt: number }>();
  private nextSweepAt = 10_000;

  constructor(private readonly now: () => number) {}

  get(key: string): number {
    const entry = this.values.get(key);
    if (!entry) return 0;
    if (entry.expiresAt <= this.now()) {
      this.values.delete(key);
      return 0;
    }
    return entry.count;
  }

  increment(key: string, by: number, ttlSeconds: number): number {
    const now = this.now();
    const entry = this.values.get(key);
    if (entry && entry.expiresAt > now) {
      entry.count += by;
      return entry.count;
    }
    this.values.set(key, { count: by, expiresAt: now + ttlSeconds * 1000 });
    if (this.values.size >= this.nextSweepAt) this.sweep(now);
    return by;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.values) if (entry.expiresAt <= now) this.values.delete(key);
    this.nextSweepAt = Math.max(10_000, this.values.size * 2);
  }
}
