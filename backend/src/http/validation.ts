import { StructError, validate, type Struct } from 'superstruct';
import { ApiError, ErrorCode } from './errors.ts';

/** Describes every failure of a superstruct validation in one sentence, unknown fields by name. */
export function describeFailures(error: StructError): string {
  const unknown: string[] = [];
  const problems: string[] = [];
  for (const failure of error.failures()) {
    const field = failure.path.join('.');
    if (failure.type === 'never') unknown.push(field);
    else problems.push(field ? `${field}: ${failure.message}` : failure.message);
  }
  if (unknown.length > 0) problems.unshift(`unknown field(s): ${unknown.join(', ')}`);
  return problems.join('; ');
}

/** Validates (and coerces) `value` against `struct`, or throws a 400 validation_failed ApiError. */
export function parseWith<T, S>(struct: Struct<T, S>, value: unknown, what: string): T {
  const [error, result] = validate(value, struct, { coerce: true });
  if (error) {
    throw new ApiError(400, ErrorCode.validationFailed, `Invalid ${what}: ${describeFailures(error)}.`);
  }
  return result;
}
