// The bundles' inline source maps cut to the repository's own modules (./module-bundles.js): a
// worker runs with --enable-source-maps (ava's), and node then reads every map as it loads the
// module: the base64 decoded and parsed, every line of the code measured (node 20 and 24 alike).
// The npm packages' half of each map cost that in every worker for frames nobody reads; without
// them a package's frame names the bundle's chunk and line, and the repository's own code keeps
// its `.ts` file and line. A chunk with no code of ours keeps no map at all, so node skips it.
import { Buffer } from 'node:buffer';
import { dirname, relative, resolve } from 'node:path';
import { decode, encode } from '@jridgewell/sourcemap-codec';

const MAP_COMMENT = '//# sourceMappingURL=data:application/json;base64,';

/**
 * `mappings` with the segments of sources that `own(index)` rejects made unmapped: each run of them
 * is one segment with no source (a frame there keeps the generated file and line), so no package
 * code is attributed to the module of ours before it. Answers null when no segment is left mapped.
 */
function ownMappings(mappings, own) {
  let mapped = false;
  const lines = decode(mappings).map((line) => {
    const kept = [];
    let unmapped = false;
    for (const segment of line) {
      if (segment.length > 1 && own(segment[1])) {
        kept.push(segment);
        unmapped = false;
        mapped = true;
      } else if (!unmapped) {
        kept.push([segment[0]]);
        unmapped = true;
      }
    }
    return kept;
  });
  return mapped ? encode(lines) : null;
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
