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

  constructor(private readonly maxPages = 2000) {}

  async getOrLoad(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.pages.get(key);
    if (cached !== undefined) return cached;
    const startedAt = this.generation;
    const value = await load();
    if (startedAt === this.generation) {
      if (this.pages.size >= this.maxPages) this.pages.clear();
      this.pages.set(key, value);
    }
    return value;
  }

  invalidate(): void {
    this.generation += 1;
    this.pages.clear();
  }
}
