/**
 * A route's regex path (`~/pets/(?<id>\d+)$`) as the control plane checks it before storing. The
 * data plane runs it with PCRE (ngx.re), Kong 3.9 with Rust's regex crate: what neither engine
 * accepts the same way is refused here, so a configuration never runs locally and fails on Kong,
 * nor gets stored and then refused by a data plane.
 */
export function pathRegexError(path: string): string | undefined {
  const source = path.slice(1);
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
