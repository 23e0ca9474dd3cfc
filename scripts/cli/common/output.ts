import type { Limits } from '../../../packages/provisioning/index.ts';

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

/** A plain text table: one header row, columns padded to the widest cell. */
export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
