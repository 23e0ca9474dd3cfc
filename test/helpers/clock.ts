/**
 * A clock tests move by hand: rate-limit windows and bans without sleeping. Processes that keep
 * their own time (a data-plane node's test clock) follow it: `advance` and `set` resolve once
 * every follower has moved too.
 */
export class ManualClock {
  private readonly followers = new Set<(ms: number) => Promise<void>>();

  constructor(private ms: number) {}

  readonly now = (): number => this.ms;

  advance(ms: number): Promise<void> {
    this.ms += ms;
    return this.notify();
  }

  set(ms: number): Promise<void> {
    this.ms = ms;
    return this.notify();
  }

  /**
   * A timer on this clock: `task` runs (awaited by `advance` and `set`) each time the clock reaches
   * `ms` after the timer's last run or its start. Returns a function that stops it.
   */
  readonly every = (ms: number, task: () => Promise<void>): (() => void) => {
    let due = this.ms + ms;
    return this.follow(async (now) => {
      if (now < due) return;
      due = now + ms;
      await task();
    });
  };

  /** `follower` is called with the new time on every change; returns a function that stops it. */
  follow(follower: (ms: number) => Promise<void>): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  private async notify(): Promise<void> {
    await Promise.all([...this.followers].map((follower) => follower(this.ms)));
  }
}
