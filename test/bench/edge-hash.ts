import { fileURLToPath } from 'node:url';
import { leastCpuPerCall, secondsArgument } from './lua-in-nginx.ts';

/**
 * What hashing and the checksum add to the edge plugin's access per request (issue 22; target
 * ≤ 2 µs): CPU µs per call of the plugin's own functions (gateway/plugins/animal-store-edge/
 * api_key.lua), run inside nginx as on a data-plane node, so ngx.crc32_long and
 * resty.sha256 (libcrypto from the nginx process) are the ones requests use. Each figure is the
 * least of five rounds after a warm-up (LuaJIT has compiled the loop by then), as
 * test/bench/least-cpu.ts measures.
 *
 *   npx tsx test/bench/edge-hash.ts [--seconds 2] [--json]
 */

export interface EdgeHashFigures {
  /** classify() of a valid ask_ key: byte checks, CRC-32, its base64url digits compared. */
  checksum: number;
  /** digest(): SHA-256 of the token, hex. */
  hash: number;
  /** What a request with a valid key pays: classify + digest. */
  added: number;
  /** A request whose ask_ key has a wrong checksum: classify only, then refused. */
  refusal: number;
  /** A key issued before the checksum (ask_ + 43): classify + digest. */
  legacy: number;
}

const SCENARIOS: Record<keyof EdgeHashFigures, string> = {
  checksum: 'classify(KEY)',
  hash: 'digest(KEY)',
  added: 'if classify(KEY) ~= MALFORMED then digest(KEY) end',
  refusal: 'if classify(TYPO) ~= MALFORMED then digest(TYPO) end',
  legacy: 'if classify(LEGACY) ~= MALFORMED then digest(LEGACY) end',
};

const SETUP = `
local api_key = require "kong.plugins.animal-store-edge.api_key"
local classify, digest, MALFORMED = api_key.classify, api_key.digest, api_key.MALFORMED
local KEY = "ask_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8M6jqiQ"
local TYPO = "ask_AAECAwQFBgcICQoLDA0ODyAREhMUFRYXGBkaGxwdHh8M6jqiQ"
local LEGACY = "ask_y4D_Cl3JKusGKa9i3S-0V7dCuX2a36JC6zuvmOUS_YU"
assert(classify(KEY) == api_key.CHECKSUMMED and classify(TYPO) == MALFORMED and classify(LEGACY) == api_key.LEGACY)
assert(digest(KEY) == "addad977039356a771f9336a0b08ca76f149cff080476e5a0a49251c0e0cea5d")
`;

export async function measureEdgeHash(seconds = 2): Promise<EdgeHashFigures> {
  return leastCpuPerCall('animal-store-edge', SETUP, SCENARIOS, seconds);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await measureEdgeHash(secondsArgument());
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
  } else {
    console.log('edge plugin, hash + checksum per request (CPU µs, least of 5 rounds, in nginx):');
    console.log(`  added for a valid ask_ key   ${figures.added.toFixed(3)} µs  (checksum ${figures.checksum.toFixed(3)}, SHA-256 + hex ${figures.hash.toFixed(3)}; target ≤ 2)`);
    console.log(`  legacy key (no checksum)     ${figures.legacy.toFixed(3)} µs`);
    console.log(`  refused, wrong checksum      ${figures.refusal.toFixed(3)} µs  (no hash, no look-up)`);
  }
}
