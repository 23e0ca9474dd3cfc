/** A consumer's requests in a window, by how they were answered. `requests` is the sum of the others. */
export interface UsageCounts {
  requests: number;
  /** 2xx answers. */
  '2xx': number;
  /** 4xx answers other than 429. */
  '4xx': number;
  /** 429 from Kong's series: the consumer's plan (rate-limiting) refused it. */
  '429': number;
  '5xx': number;
  /** 1xx and 3xx. */
  other: number;
  /** Refused while banned (the edge plugin's counter; Kong counts these under consumer ""). */
  banned: number;
}

export type StatusClass = Exclude<keyof UsageCounts, 'requests' | 'banned'>;
export const COUNT_COLUMNS = ['requests', '2xx', '4xx', '429', '5xx', 'other', 'banned'] as const satisfies ReadonlyArray<keyof UsageCounts>;

export const emptyCounts = (): UsageCounts => ({ requests: 0, '2xx': 0, '4xx': 0, '429': 0, '5xx': 0, other: 0, banned: 0 });

/** The class of a status code as Kong's `code` label writes it ("200", "429"…). */
export function statusClass(code: string): StatusClass {
  if (code === '429') return '429';
  switch (code[0]) {
    case '2':
      return '2xx';
    case '4':
      return '4xx';
    case '5':
      return '5xx';
    default:
      return 'other';
  }
}

/**
 * Whole requests from what was measured: Prometheus's increase() gives fractions (it
 * extrapolates to the window's edges). Each class is rounded, then `requests` is their sum, so
 * the columns always add up.
 */
export function rounded(counts: UsageCounts): UsageCounts {
  const out = emptyCounts();
  for (const column of COUNT_COLUMNS) if (column !== 'requests') out[column] = Math.round(counts[column]);
  out.requests = out['2xx'] + out['4xx'] + out['429'] + out['5xx'] + out.other + out.banned;
  return out;
}

export const isEmpty = (counts: UsageCounts) => COUNT_COLUMNS.every((column) => counts[column] === 0);

/** Per consumer (username), the counts; created on first use. */
export class CountsByConsumer {
  readonly byConsumer = new Map<string, UsageCounts>();

  of(consumer: string): UsageCounts {
    let counts = this.byConsumer.get(consumer);
    if (!counts) this.byConsumer.set(consumer, (counts = emptyCounts()));
    return counts;
  }

  addStatus(consumer: string, code: string, n: number): void {
    this.of(consumer)[statusClass(code)] += n;
  }

  addBanned(consumer: string, n: number): void {
    this.of(consumer).banned += n;
  }
}
