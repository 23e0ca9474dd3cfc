import { coerce, define, integer, refine, string } from 'superstruct';

/** A positive int64 that JavaScript represents exactly; larger values are rejected, never rounded. */
export const PositiveId = refine(integer(), 'PositiveId', (value) =>
  Number.isSafeInteger(value) && value >= 1
    ? true
    : `Expected an integer from 1 to ${Number.MAX_SAFE_INTEGER} (larger values cannot be kept exact)`,
);

/**
 * Plain digits, or digits and a zero fraction: JSON Schema (the contract's `type: integer`) counts
 * 22.0 as the integer 22, so the API accepts what the contract admits (found by `npm run fuzz`).
 */
const DIGITS = /^[0-9]+(\.0+)?$/;

/** A path or query parameter that must be a positive integer written in digits. */
export const IdParam = coerce(PositiveId, string(), (text) => (DIGITS.test(text) ? Number(text) : text));

/**
 * A non-blank string of 1..max characters without U+0000, which PostgreSQL cannot store in text
 * (it would fail the insert, a 500) and SQLite would: refused on both, so both stores agree.
 */
export function nonBlankString(max: number) {
  return refine(string(), 'NonBlank', (value) => {
    // characters as JSON Schema's maxLength counts them (code points, so 😀 is one, not two
    // UTF-16 units), and as PostgreSQL's varchar(n) does
    const length = [...value].length;
    if (length < 1 || length > max) return `Expected a string of 1 to ${max} characters; it has ${length}`;
    if (value.trim().length === 0) return 'Expected a string that is not blank';
    return value.includes('\u0000') ? 'Expected a string without U+0000 (NUL)' : true;
  });
}

/** Query parameter `limit`: optional, integer 1..100, default 20. */
export const PAGE_LIMIT = { default: 20, min: 1, max: 100 } as const;
export const PageLimitParam = coerce(
  define<number>('PageLimit', (value) =>
    Number.isInteger(value) && (value as number) >= PAGE_LIMIT.min && (value as number) <= PAGE_LIMIT.max
      ? true
      : `Expected an integer from ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max}, but received: (described by parseWith)`,
  ),
  string(),
  (text) => (DIGITS.test(text) ? Number(text) : text),
);
