/**
 * penlight 1.14.0's pl.pretty.write(value) with its default indent (lua/pl/pretty.lua:222-368),
 * which Kong's schema-violation messages use for an error table below `field.sub`
 * (kong/db/errors.lua:239): one entry a line, the list part first, then names sorted, then the
 * other positions; strings quoted as stringx.quote_string does.
 */
export function luaPretty(value: unknown): string {
  const lines: string[] = [];
  const write = (item: unknown, indent: string, prefix: string): void => {
    if (!isTable(item)) {
      lines.push(`${prefix}${typeof item === 'string' ? quoteString(item) : String(item)},`);
      return;
    }
    lines.push(`${prefix}{`);
    const inner = `${indent}  `;
    const entries = tableEntries(item);
    let position = 1;
    for (; entries.has(String(position)); position++) write(entries.get(String(position)), inner, inner);
    const names = [...entries.keys()].filter((key) => !/^\d+$/.test(key)).sort();
    const numbers = [...entries.keys()].filter((key) => /^\d+$/.test(key) && Number(key) >= position).sort((a, b) => Number(a) - Number(b));
    for (const name of names) write(entries.get(name), inner, `${inner}${isIdentifier(name) ? name : `[${bracketed(quoteString(name))}]`} = `);
    for (const number of numbers) write(entries.get(number), inner, `${inner}[${number}] = `);
    eatLastComma(lines);
    lines.push(`${indent}},`);
  };
  write(value, '', '');
  eatLastComma(lines);
  return lines.join('\n');
}

const isTable = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === 'object' && value !== null;

/** A table's entries by Lua key: an array's positions from 1, its nulls absent (nil in Lua). */
function tableEntries(table: Record<string, unknown> | unknown[]): Map<string, unknown> {
  const entries = Array.isArray(table) ? table.map((item, i) => [String(i + 1), item] as const) : Object.entries(table);
  return new Map(entries.filter(([, item]) => item !== null && item !== undefined));
}

function eatLastComma(lines: string[]): void {
  const last = lines.length - 1;
  if (lines[last]?.endsWith(',')) lines[last] = lines[last].slice(0, -1);
}

const KEYWORDS = new Set('and break do else elseif end false for function goto if in local nil not or repeat return then true until while'.split(' '));
const isIdentifier = (key: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !KEYWORDS.has(key);
const bracketed = (quoted: string) => (quoted.startsWith('[') ? ` ${quoted} ` : quoted);

/** The most `=` of a long bracket (`[[`, `]=]`, …) in `text`, or undefined (stringx.lua has_lquote). */
function longQuoteEquals(text: string): number | undefined {
  let most: number | undefined;
  const pattern = /([[\]])(=*)\1/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    most = Math.max(most ?? 0, match[2]!.length);
    pattern.lastIndex = match.index + match[0].length - 1;
  }
  return most;
}

/** stringx.quote_string (penlight 1.14.0 stringx.lua:822-846): a long bracket, else Lua's %q. */
function quoteString(text: string): string {
  const equals = longQuoteEquals(`${text}]`);
  if ((text.includes('\n') || equals !== undefined) && !text.includes('\r')) {
    const eq = '='.repeat((equals ?? -1) + 1);
    return `[${eq}[${text.startsWith('\n') ? `\n${text}` : text}]${eq}]`;
  }
  const escaped = text.replace(/[\\"\n\r\0]/g, (char) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\\n', '\r': '\\r', '\0': '\\0' })[char]!);
  return `"${escaped}"`;
}
