import { StructError, validate, type Struct } from 'superstruct';
import { ApiError, ErrorCode } from './errors.ts';

/**
 * Stands in for a nested object or array while validating. superstruct prints a failing value into
 * its message (`${value}`), which recurses through deep arrays and throws on an object whose own
 * `toString` is not a function; our operations take only scalars below the top level, so the
 * nested value itself is never needed, only what kind of value it was.
 */
class Nested {
  constructor(private readonly kind: string) {}
  toString(): string {
    return this.kind;
  }
}

function kindOf(value: object): string {
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** The input with every value below the top level that is an object or array replaced by a Nested. */
function opaqueNested(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty, not assignment: a "__proto__" key must stay a field (and be refused by name).
    Object.defineProperty(copy, key, {
      value: item !== null && typeof item === 'object' ? new Nested(kindOf(item as object)) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

const MAX_ECHO = 40;

/** Whether client text may be echoed in a message as it is: short and printable ASCII. */
export const isEchoable = (text: string) => text.length <= MAX_ECHO && /^[\x20-\x7e]*$/.test(text);

/** What the client sent, in words, bounded: short strings and numbers verbatim, others by kind. */
function describeValue(value: unknown): string {
  if (value instanceof Nested) return String(value);
  if (typeof value === 'string') {
    return isEchoable(value) ? JSON.stringify(value) : `a string of ${value.length} UTF-16 units`;
  }
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** superstruct's own wording up to ", but received: …", then our description of the value. */
function failureMessage(message: string, value: unknown): string {
  const cut = message.indexOf(', but received');
  return cut === -1 ? message : `${message.slice(0, cut)}, but received ${describeValue(value)}`;
}

/** Describes every failure of a superstruct validation in one sentence, unknown fields by name. */
function describeFailures(error: StructError): string {
  const unknown: string[] = [];
  const problems: string[] = [];
  for (const failure of error.failures()) {
    const field = failure.path.map((segment) => describeKey(String(segment))).join('.');
    if (failure.type === 'never') unknown.push(field);
    else {
      const message = failureMessage(failure.message, failure.value);
      problems.push(field ? `${field}: ${message}` : message);
    }
  }
  if (unknown.length > 0) problems.unshift(`unknown field(s): ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}`);
  return problems.join('; ');
}

/** Field names come from the client too: printable and short ones as they are, others summarised. */
function describeKey(key: string): string {
  return isEchoable(key) ? key : `(a field name of ${key.length} characters)`;
}

/** Validates (and coerces) `value` against `struct`, or throws a 400 validation_failed ApiError. */
export function parseWith<T, S>(struct: Struct<T, S>, value: unknown, what: string): T {
  const [error, result] = validate(opaqueNested(value), struct, { coerce: true });
  if (error) {
    throw new ApiError(400, ErrorCode.validationFailed, `Invalid ${what}: ${describeFailures(error)}.`);
  }
  return result;
}
