const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const DAY_MS = UNIT_MS.d!;
/** 2030-01-01T00:00:00Z: ISO 8601 without milliseconds when there are none. */
export const isoSeconds = (time: Date) => time.toISOString().replace('.000Z', 'Z');

/** The most days `--by day` asks about in one run (two instant queries each). */
export const MAX_DAYS = 400;

/** A duration as `--since` takes it: `30m`, `24h`, `7d`, `2w`, or a sum such as `1d12h`. Null if malformed. */
export function parseDuration(text: string): number | null {
  if (!/^(\d+[wdhms])+$/.test(text)) return null;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([wdhms])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return Number.isSafeInteger(ms) && ms > 0 ? ms : null;
}

/** An instant as `--until` takes it: `2030-01-31` (UTC midnight) or an ISO 8601 time with Z or an offset. */
export function parseInstant(text: string): Date | null {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  if (!dateOnly && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  // Date.parse rolls 2030-02-30 over into March: the calendar date must read back the same.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (new Date(Date.UTC(year, month - 1, day)).toISOString().slice(0, 10) !== text.slice(0, 10)) return null;
  const time = Date.parse(dateOnly ? `${text}T00:00:00Z` : text);
  return Number.isNaN(time) ? null : new Date(time);
}

export interface UsageWindow {
  /** The UTC day (YYYY-MM-DD) with --by day. */
  day?: string;
  from: Date;
  to: Date;
}

const startOfUtcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * The windows to report: [until − since, until], or with `byDay` every UTC day that window
 * touches, each whole (00:00 to 24:00 UTC) except the last, which ends at `until`. A day that
 * `until` ends exactly at its start is left out, so `--until 2030-02-01 --since 31d --by day` is
 * January.
 */
export function usageWindows(sinceMs: number, until: Date, byDay: boolean): UsageWindow[] {
  const end = until.getTime();
  if (!byDay) return [{ from: new Date(end - sinceMs), to: until }];
  const windows: UsageWindow[] = [];
  for (let day = startOfUtcDay(end - sinceMs); day < end; day += DAY_MS) {
    windows.push({ day: new Date(day).toISOString().slice(0, 10), from: new Date(day), to: new Date(Math.min(day + DAY_MS, end)) });
  }
  return windows;
}

/** Days `usageWindows` would return with `byDay`, without building them. */
export const dayCount = (sinceMs: number, until: Date) => Math.ceil((until.getTime() - startOfUtcDay(until.getTime() - sinceMs)) / DAY_MS);
