// The bundles' inline source maps cut to the repository's own modules (./module-bundles.js): a
// worker runs with --enable-source-maps (ava's), and node then reads every map as it loads the
// module: the base64 decoded and parsed, every line of the code measured (node 20 and 24 alike).
// The npm packages' half of each map cost that in every worker for frames nobody reads; without
// them a package's frame names the bundle's chunk and line, and the repository's own code keeps
// its `.ts` file and line. A chunk with no code of ours keeps no map at all, so node skips it.
import { Buffer } from 'node:buffer';
import { dirname, relative, resolve } from 'node:path';

const MAP_COMMENT = '//# sourceMappingURL=data:application/json;base64,';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((char, value) => [char, value]));

/** The fields of one segment of a source map's `mappings` (base64 VLQ), relative as written. */
function decodeSegment(text) {
  const fields = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT.get(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return fields;
}

function encodeSegment(fields) {
  let text = '';
  for (const field of fields) {
    let value = field < 0 ? (-field << 1) | 1 : field << 1;
    do {
      let digit = value & 31;
      value >>>= 5;
      if (value > 0) digit |= 32;
      text += BASE64[digit];
    } while (value > 0);
  }
  return text;
}

/**
 * `mappings` with the segments of sources that `own(index)` rejects made unmapped: each run of them
 * is one segment with no source (a frame there keeps the generated file and line), so no package
 * code is attributed to the module of ours before it. Answers null when no segment is left mapped.
 */
function ownMappings(mappings, own) {
  // absolute values across the map (the source, its line and column, the name); the column per line
  const state = [0, 0, 0, 0];
  const written = [0, 0, 0, 0];
  let mapped = false;
  const lines = mappings.split(';').map((line) => {
    let column = 0;
    let writtenColumn = 0;
    let unmapped = false;
    const kept = [];
    for (const segment of line === '' ? [] : line.split(',')) {
      const fields = decodeSegment(segment);
      column += fields[0];
      for (let i = 1; i < fields.length; i++) state[i - 1] += fields[i];
      if (fields.length > 1 && own(state[0])) {
        const out = [column - writtenColumn];
        for (let i = 1; i < fields.length; i++) {
          out.push(state[i - 1] - written[i - 1]);
          written[i - 1] = state[i - 1];
        }
        kept.push(encodeSegment(out));
        writtenColumn = column;
        unmapped = false;
        mapped = true;
      } else if (!unmapped) {
        kept.push(encodeSegment([column - writtenColumn]));
        writtenColumn = column;
        unmapped = true;
      }
    }
    return kept.join(',');
  });
  return mapped ? lines.join(';') : null;
}

/**
 * The text of the bundle or chunk written at `file`, its inline map keeping the mappings of the
 * repository's own modules only (none under `packagesDir`).
 */
export function keepOwnMappings(text, file, packagesDir) {
  const at = text.lastIndexOf(MAP_COMMENT);
  if (at === -1) return text;
  const map = JSON.parse(Buffer.from(text.slice(at + MAP_COMMENT.length).trim(), 'base64').toString('utf8'));
  const own = map.sources.map((source) => relative(packagesDir, resolve(dirname(file), source)).startsWith('..'));
  const mappings = ownMappings(map.mappings, (index) => own[index]);
  if (mappings === null) return text.slice(0, at);
  const payload = Buffer.from(JSON.stringify({ ...map, mappings })).toString('base64');
  return `${text.slice(0, at)}${MAP_COMMENT}${payload}\n`;
}
