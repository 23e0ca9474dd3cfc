/**
 * A route's regexes (paths `~/pets/(?<id>\d+)$`, header values `~*^v2`) as the control plane checks
 * them before storing. The
 * data plane runs it with PCRE (ngx.re), Kong 3.9 with Rust's regex crate: what neither engine
 * accepts the same way is refused here, so a configuration never runs locally and fails on Kong,
 * nor gets stored and then refused by a data plane.
 */
export function pathRegexError(path: string): string | undefined {
  return regexError(path.slice(1));
}

/** The same check for any regex of a route (a `~` path without its `~`, a `~*` header value). */
export function regexError(source: string): string | undefined {
  // Rust's regex crate has no lookaround and no backreferences.
  if (/\(\?<?[=!]|\\[1-9]|\\k</.test(source)) return `invalid regex: '${source}': lookaround and backreferences are not supported by Kong's router`;
  // \u and \x{…} mean different things (or nothing) across JavaScript, PCRE and Rust.
  if (/\\u|\\x\{/.test(source)) return `invalid regex: '${source}': write the character itself instead of a \\u or \\x{…} escape`;
  try {
    new RegExp(`^${source.replaceAll('(?P<', '(?<')}`);
    return undefined;
  } catch (error) {
    return `invalid regex: '${source}' (${(error as Error).message.replace(/^Invalid regular expression: /, '')})`;
  }
}
