/** Lua's tonumber of a string: decimal or hexadecimal, signed, spaces around allowed; else undefined. */
export function luaNumber(text: string): number | undefined {
  const match = /^\s*([-+]?)(0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$/.exec(text);
  if (!match) return undefined;
  const magnitude = Number(match[2]);
  return match[1] === '-' ? -magnitude : magnitude;
}
