/** A clock tests move by hand: rate-limit windows and bans without sleeping. */
export class ManualClock {
  constructor(private ms: number) {}

  readonly now = (): number => this.ms;

  advance(ms: number): void {
    this.ms += ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }
}
