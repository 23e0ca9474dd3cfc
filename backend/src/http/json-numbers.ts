/**
 * JSON.parse reads every number as a double: `1.00000000000000001` and `9007199254740990.9999`
 * arrive as the integers 1 and 9007199254740991, and an integer field would take them. This finds
 * such a literal in the text JSON.parse accepted: one whose value is an integer only because it
 * was rounded. Other numbers are left to the validators (a fraction that survives is refused by
 * an integer field; an integer past 2^53 - 1 is not a safe integer).
 */

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?(?:[eE]([+-]?[0-9]+))?/y;
/** Past this scale the double is 0 or Infinity, which the exact comparison needs no digits for. */
const MAX_SCALE = 400;

/** Whether the decimal literal's exact value is an integer other than the double it parsed to. */
function roundedToInteger(literal: string, fraction: string | undefined, exponent: string | undefined): boolean {
  const value = Number(literal);
  if (!Number.isInteger(value)) return false;
  const unsigned = literal.replace(/^-/, '');
  const digits = unsigned.replace(/[.eE].*$/, '') + (fraction?.slice(1) ?? '');
  const scale = Number(exponent ?? 0) - (fraction ? fraction.length - 1 : 0);
  if (scale >= 0) return scale <= MAX_SCALE && BigInt(digits) * 10n ** BigInt(scale) !== BigInt(Math.abs(value));
  const cut = digits.length + scale;
  if (cut <= 0 || !/^0*$/.test(digits.slice(cut))) return !/^0*$/.test(digits);
  return BigInt(digits.slice(0, cut)) !== BigInt(Math.abs(value));
}

/** A number rounded into an integer in `text` (valid JSON): the field it was given for and its literal. */
export interface RoundedNumber {
  /** The object key it was the value of (an array item: its array's key; at the top: empty). */
  field: string;
  literal: string;
}

/** The first number of `text` (JSON that JSON.parse accepted) whose integer value came from rounding. */
export function findRoundedNumber(text: string): RoundedNumber | undefined {
  const keys: Array<string | undefined> = [];
  let lastString = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      lastString = text.slice(index + 1, end);
      index = end;
    } else if (char === '{' || char === '[') {
      keys.push(keys.at(-1));
    } else if (char === '}' || char === ']') {
      keys.pop();
    } else if (char === ':') {
      keys[keys.length - 1] = lastString;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = index;
      const match = NUMBER.exec(text)!;
      if ((match[1] !== undefined || match[2] !== undefined) && roundedToInteger(match[0], match[1], match[2])) {
        return { field: keys.at(-1) ?? '', literal: match[0] };
      }
      index = NUMBER.lastIndex - 1;
    }
  }
  return undefined;
}
