import { escapeUnprintable, type Limits } from '../../../packages/provisioning/index.ts';

/** Where the CLI reads its environment and writes its output; the script passes the process's. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

export const terminalWidth = (stream: CliIo['stdout']) =>
  (stream as NodeJS.WriteStream).isTTY ? (stream as NodeJS.WriteStream).columns : 80;
export const oneLine = (text: string) => text.trim().replace(/\s*\n\s*/g, ' ');
export const describeLimits = (limits: Limits | null) => (limits ? `${limits.minute}/min, ${limits.day}/day` : '-');
export const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * A plain text table: one header row, columns padded to the widest cell. A cell's control and
 * format characters (a consumer's name made through the Admin API can hold a line break, a NUL,
 * a bidi override) are shown as `\u{hex}`, as the CLI's messages show them: one line per row.
 */
export function renderTable(headers: string[], given: string[][]): string {
  const rows = given.map((row) => row.map(escapeUnprintable));
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Seconds as the two largest units: `29d 23h`, `5h 3m`, `42s`. */
function describeSeconds(seconds: number): string {
  const units: Array<[string, number]> = [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]];
  const parts: string[] = [];
  let left = seconds;
  for (const [unit, size] of units) {
    if (left >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** A key's scopes as show and list print them. */
export const describeScopes = (scopes: readonly string[]) => (scopes.length === 0 ? 'all' : scopes.join(','));

/** A key's time left as show and list print them. */
export const describeExpiry = (key: { expiresInSeconds: number | null; expiresAt: number | null }) =>
  key.expiresInSeconds === null || key.expiresAt === null ? 'never' : `in ${describeSeconds(key.expiresInSeconds)} (${isoTime(key.expiresAt)})`;

/** A new key's name, scopes and expiry, when any differs from a plain key's (default, all, never). */
export function describeNewKey(key: { name: string; scopes: readonly string[]; expiresAt: number | null }): string | null {
  if (key.name === 'default' && key.scopes.length === 0 && key.expiresAt === null) return null;
  return `key ${key.name}: scopes ${describeScopes(key.scopes)}, expires ${key.expiresAt === null ? 'never' : isoTime(key.expiresAt)}`;
}
