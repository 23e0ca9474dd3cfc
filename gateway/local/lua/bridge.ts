import type { Phase } from '../plugins/plugin.ts';
import type { ResponseSource } from '../proxy/request-context.ts';

/**
 * The protocol between the plugin host (TypeScript) and the PDK (Lua), defined once: the Lua side
 * receives these tables as the module "pdk.bridge" (see bridgeModuleSource), so no code, phase or
 * source number is written twice.
 *
 * A phase call passes numbers (PHASES and SOURCES index from 1, as Lua tables do) and one header
 * blob; it returns the ops the phase produced: FS-separated code/a/b triples. Anything else the PDK
 * needs it reads when a plugin asks (READS), at most once per phase.
 */

/** Frame the ops string and header blobs: control characters, refused in header data. */
export const FS = '\x1f';
export const RS = '\x1e';

/** What a phase changed, in the order it changed it. */
export const OPS = {
  set_service_header: 'sh',
  add_service_header: 'ah',
  clear_service_header: 'ch',
  set_service_path: 'sp',
  set_service_query: 'sq',
  clear_service_query_arg: 'cq',
  set_response_header: 'rsh',
  add_response_header: 'rah',
  clear_response_header: 'rch',
  set_status: 'st',
  /** kong.response.exit/error: a = status; exit_header ops and the pending body follow. */
  exit: 'exit',
  exit_header: 'xh',
  /** kong.response.set_raw_body: the pending body replaces the response body. */
  replace_body: 'body',
  /** The handler raised an error (not an exit): a = the message. */
  fail: 'fail',
} as const;
export type OpCode = (typeof OPS)[keyof typeof OPS];

export const PHASES = ['rewrite', 'access', 'header_filter', 'body_filter', 'log'] as const satisfies readonly Phase[];
export const SOURCES = ['service', 'exit', 'error'] as const satisfies readonly ResponseSource[];

/** The headers packed into a phase call: the ones the phase mostly reads. */
export const PHASE_HEADERS = { rewrite: 'request', access: 'request', header_filter: 'response' } as const satisfies Partial<Record<Phase, 'request' | 'response'>>;

/**
 * What the PDK may ask the host for (__js_req), each answered with a string or nil. "consumer":
 * consumer id, username, custom_id, credential id and its consumer's id, FS-separated ("" for none).
 */
export const READS = ['headers', 'method', 'path', 'scheme', 'host', 'port', 'query', 'ip', 'resp_headers', 'body', 'route', 'service', 'node_id', 'consumer'] as const;
export type Read = (typeof READS)[number];

/** The 1-based code of a phase or source, as the VM indexes PHASES and SOURCES. */
export const PHASE_CODE = Object.fromEntries(PHASES.map((phase, i) => [phase, i + 1])) as Record<Phase, number>;
export const SOURCE_CODE = Object.fromEntries(SOURCES.map((source, i) => [source, i + 1])) as Record<ResponseSource, number>;

/** The Lua module "pdk.bridge": the same tables as Lua source. */
export function bridgeModuleSource(): string {
  return `return ${luaLiteral({ FS, RS, OPS, PHASES, SOURCES, PHASE_HEADERS, READS })}\n`;
}

type LuaLiteral = string | number | boolean | readonly LuaLiteral[] | { readonly [key: string]: LuaLiteral };

/** A Lua literal for plain data (valid in Lua 5.1 and 5.4). */
export function luaLiteral(value: LuaLiteral): string {
  if (typeof value === 'string') return luaString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{ ${value.map(luaLiteral).join(', ')} }`;
  const entries = Object.entries(value as Record<string, LuaLiteral>).map(([key, v]) => `[${luaString(key)}] = ${luaLiteral(v)}`);
  return `{ ${entries.join(', ')} }`;
}

/** A quoted Lua string: quotes, backslashes and control characters as decimal escapes. */
function luaString(value: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${value.replace(/[\x00-\x1f\x7f"\\]/g, (c) => `\\${c.charCodeAt(0).toString().padStart(3, '0')}`)}"`;
}
