import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { IdempotencyStore } from './idempotency-store.ts';

export interface PurgeOptions {
  /** Epoch milliseconds. */
  now: () => number;
  /** Rows per DELETE: each batch is one short statement, so requests queue behind at most one. */
  batchSize?: number;
}

/**
 * Deletes expired idempotency records in small batches, yielding to the event loop between
 * batches so requests waiting for the connection go first. Lookups ignore expired records anyway;
 * purging only bounds the table. Returns how many it deleted.
 */
export async function purgeExpired(store: IdempotencyStore, { now, batchSize = 500 }: PurgeOptions): Promise<number> {
  const cutoff = now();
  let total = 0;
  for (;;) {
    const deleted = await store.deleteExpired(cutoff, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
    await yieldToRequests();
  }
}

/** Runs purgeExpired every `intervalMs` (never two at once) until stopped; a failed run is logged and retried next time. */
export function schedulePurge(store: IdempotencyStore, options: PurgeOptions & { intervalMs: number; log?: (error: unknown) => void }): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = purgeExpired(store, options)
      .catch((error) => (options.log ?? ((e) => console.error('[backend] purging expired idempotency records failed:', e)))(error))
      .finally(() => (busy = false));
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
