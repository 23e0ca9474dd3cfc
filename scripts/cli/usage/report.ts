import { renderTable } from '../common/output.ts';
import { COUNT_COLUMNS, isoSeconds, type PlanInfo, type UsageCounts } from '../../../packages/usage/index.ts';

/** One row of `consumers usage`: the same fields in json and csv. */
export type UsageRow = {
  /** UTC day, YYYY-MM-DD: only with --by day. */
  day?: string;
  username: string;
  plan: string | null;
  limit_minute: number | null;
  limit_day: number | null;
} & UsageCounts & {
    /** The window counted: ISO times; `from` is null for node totals (each node's start). */
    from: string | null;
    to: string;
    /** What the numbers are when it is not plain: "totals since each node started". */
    note: string;
  };

export const FORMATS = ['table', 'csv', 'json'] as const;
export type Format = (typeof FORMATS)[number];

export function usageRow(
  username: string,
  plan: PlanInfo | undefined,
  counts: UsageCounts,
  window: { day?: string; from: Date | null; to: Date; note: string },
): UsageRow {
  return {
    ...(window.day !== undefined ? { day: window.day } : {}),
    username,
    plan: plan?.plan ?? null,
    limit_minute: plan?.limitMinute ?? null,
    limit_day: plan?.limitDay ?? null,
    ...counts,
    from: window.from ? isoSeconds(window.from) : null,
    to: isoSeconds(window.to),
    note: window.note,
  };
}

const CSV_COLUMNS = ['username', 'plan', 'limit_minute', 'limit_day', ...COUNT_COLUMNS, 'from', 'to', 'note'] as const;

/**
 * A text cell a spreadsheet would read as a formula (OWASP, CSV injection): starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return. A username is any string Kong took through the
 * Admin API (`=HYPERLINK(…)`), and the billing export is opened in spreadsheets.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180 quoting; a text cell that could start a formula gets a leading `'` and is quoted. */
function csvField(value: string | number | null | undefined): string {
  if (typeof value === 'number') return String(value);
  const given = value ?? '';
  const text = FORMULA_START.test(given) ? `'${given}` : given;
  return text !== given || /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const columnsOf = (byDay: boolean) => (byDay ? (['day', ...CSV_COLUMNS] as const) : CSV_COLUMNS);

/** RFC 4180 CSV with a header row (LF line ends); an empty field is a null. */
export function renderCsv(rows: UsageRow[], byDay: boolean): string {
  const columns = columnsOf(byDay);
  return [columns.join(','), ...rows.map((row) => columns.map((column) => csvField(row[column])).join(','))].join('\n');
}

/**
 * A JSON array of the rows, each object's keys in the csv's order: JSON.stringify alone would
 * put "429", an integer-like key, first.
 */
export function renderJson(rows: UsageRow[], byDay: boolean): string {
  const columns = columnsOf(byDay);
  return `[${rows.map((row) => `{${columns.map((column) => `${JSON.stringify(column)}:${JSON.stringify(row[column] ?? null)}`).join(',')}}`).join(',')}]`;
}

const limitsText = (row: UsageRow) =>
  row.limit_minute === null && row.limit_day === null ? '-' : `${row.limit_minute ?? '-'}/min, ${row.limit_day ?? '-'}/day`;

/** The table, headed by a line that says what was counted. */
export function renderUsageTable(rows: UsageRow[], byDay: boolean, heading: string): string {
  const headers = [...(byDay ? ['DAY'] : []), 'USERNAME', 'PLAN', 'LIMITS', ...COUNT_COLUMNS.map((c) => c.toUpperCase())];
  const cells = rows.map((row) => [
    ...(byDay ? [row.day ?? ''] : []),
    row.username,
    row.plan ?? '-',
    limitsText(row),
    ...COUNT_COLUMNS.map((column) => String(row[column])),
  ]);
  return `${heading}\n${rows.length > 0 ? renderTable(headers, cells) : 'no requests in this window'}`;
}
