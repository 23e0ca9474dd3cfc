/**
 * Rendered pages of GET /pets (keyed by public path and query string), kept between writes. Only sound when this process is the only
 * writer (SQLite); with PostgreSQL and several replicas it is turned off (see createApp).
 *
 * Every write bumps the generation and drops all pages. A read stores its page only if no write
 * happened while it ran, so a slow read can never put stale rows back after an invalidation.
 */
export class PageCache<T> {
  private readonly pages = new Map<string, T>();
  private generation = 0;
  private size = 0;

  /**
   * Dropped whole when it would hold more than `maxPages` pages or more than `maxSize` of what
   * `sizeOf` counts (a page's characters: 100 long names make a page of ~125 KB, so a count of
   * pages alone let 2,000 of them hold ~250 MB).
   */
  constructor(
    private readonly sizeOf: (value: T) => number,
    private readonly maxSize = 8 * 1024 * 1024,
    private readonly maxPages = 2000,
  ) {}

  async getOrLoad(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.pages.get(key);
    if (cached !== undefined) return cached;
    const startedAt = this.generation;
    const value = await load();
    if (startedAt === this.generation) {
      const size = this.sizeOf(value);
      if (this.pages.size >= this.maxPages || this.size + size > this.maxSize) this.clear();
      if (size <= this.maxSize) {
        this.pages.set(key, value);
        this.size += size;
      }
    }
    return value;
  }

  invalidate(): void {
    this.generation += 1;
    this.clear();
  }

  private clear(): void {
    this.pages.clear();
    this.size = 0;
  }
}
