/** One sample of Prometheus's text exposition format (version 0.0.4), as Kong's /metrics writes it. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A /metrics body that is not the exposition format: says which line and why. */
class ExpositionError extends Error {}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseValue(text: string): number {
  switch (text) {
    case '+Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    case 'NaN':
      return NaN;
    default: {
      const value = text === '' ? NaN : Number(text);
      if (Number.isNaN(value)) throw new Error(`the value ${JSON.stringify(text.slice(0, 40))} is not a number`);
      return value;
    }
  }
}

/** `{a="x",b="y\"z"}` from `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(line.slice(i))?.[0];
    if (!name) throw new Error('a label name was expected');
    i += name.length;
    if (line[i] !== '=' || line[i + 1] !== '"') throw new Error(`label ${name}: =" was expected`);
    i += 2;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) throw new Error(`label ${name}: the value is not closed`);
      i += 1;
      if (c === '"') break;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const escaped = line[i];
      i += 1;
      if (escaped === 'n') value += '\n';
      else if (escaped === '\\' || escaped === '"') value += escaped;
      else throw new Error(`label ${name}: unknown escape \\${escaped ?? ''}`);
    }
    labels[name] = value;
    if (line[i] === ',') i += 1;
    else if (line[i] !== '}') throw new Error(`label ${name}: , or } was expected`);
  }
}

/** The samples of an exposition body; comments (# HELP, # TYPE) and blank lines are skipped. */
export function* parseExposition(body: string, source: string): Generator<Sample> {
  let lineNumber = 0;
  for (const raw of body.split('\n')) {
    lineNumber += 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.startsWith('#')) continue;
    try {
      const name = NAME.exec(line)?.[0];
      if (!name) throw new Error('a metric name was expected');
      let rest = name.length;
      let labels: Record<string, string> = {};
      if (line[rest] === '{') ({ labels, end: rest } = parseLabels(line, rest));
      // value, then an optional timestamp
      const fields = line.slice(rest).trim().split(/[ \t]+/);
      if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new Error('a value (and an optional timestamp) was expected');
      yield { name, labels, value: parseValue(fields[0]!) };
    } catch (error) {
      throw new ExpositionError(`${source} line ${lineNumber}: ${(error as Error).message}`);
    }
  }
}
