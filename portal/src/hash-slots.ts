/**
 * Bounds the password hashes running at once. Each scrypt hash (passwords.ts) takes 32 MiB while
 * it runs and a libuv thread that SQLite's queries share, so a flood of sign-ins and sign-ups,
 * however many addresses it comes from, must not start them all: `concurrent` run, `queued` wait
 * in turn, and any beyond that are refused at once with HashSlotsFull (the routes answer 429 with
 * Retry-After). Memory stays near `concurrent` × 32 MiB whatever clients send.
 */
export class HashSlotsFull extends Error {
  constructor() {
    super('too many password checks at once');
    this.name = 'HashSlotsFull';
  }
}

export interface HashSlotLimits {
  concurrent: number;
  queued: number;
}

/** 2 at once (~60 ms each here): ~30 hashes a second; 32 waiting is about a second's wait at most. */
const DEFAULT_HASH_SLOTS: HashSlotLimits = { concurrent: 2, queued: 32 };

export class HashSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limits: HashSlotLimits = DEFAULT_HASH_SLOTS) {}

  /** Runs `hash` once a slot is free; rejects with HashSlotsFull at once when the queue is full. */
  async run<T>(hash: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrent) {
      if (this.waiting.length >= this.limits.queued) throw new HashSlotsFull();
      // the slot is handed over by release(), so `running` is not decremented in between
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await hash();
    } finally {
      this.release();
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
