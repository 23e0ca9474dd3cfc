/**
 * What went wrong, for a caller to act on without reading the message: the CLI maps each code to
 * an exit code, a web server to an HTTP status. The message is one line meant for a person; it
 * never holds a key.
 */
export type ProvisioningErrorCode =
  /** The Admin API could not be reached (network, DNS, TLS). */
  | 'admin-api-unreachable'
  /** Kong answered a call with an error status (`status` holds it). */
  | 'admin-api-failed'
  /** Kong answered without a field the library relies on (an id, a page's data). */
  | 'admin-api-unexpected'
  | 'consumer-not-found'
  | 'consumer-exists'
  /** A username or custom_id that cannot be (a control character): what the caller asked for is wrong. */
  | 'consumer-options'
  /** Another consumer has the custom_id asked for. */
  | 'custom-id-taken'
  /** The consumer lacks the CLI's tag, or belongs to gateway/kong.yml. */
  | 'consumer-not-managed'
  /** Limits that do not fit the plan: what the caller asked for is wrong, not the gateway. */
  | 'plan-limits'
  /** Another plan change of the consumer ran at the same time and wrote last; the message names the plan in force. */
  | 'plan-conflict'
  /** A key's name, scopes or expiry that cannot be: what the caller asked for is wrong. */
  | 'key-options'
  /** The consumer already has a live key of that name. */
  | 'key-exists'
  /** The consumer has no key of that name (or id). */
  | 'key-not-found'
  /** Another change of the same key name ran at the same time; this one backed out: retry it. */
  | 'key-conflict'
  /** Keys of several names, and no name said which to act on. */
  | 'key-ambiguous'
  /** gateway/plans.yaml is malformed. */
  | 'catalogue-invalid'
  /** A step failed and undoing the earlier ones failed too: the consumer needs a look by hand. */
  | 'rollback-failed';

export class ProvisioningError extends Error {
  constructor(
    readonly code: ProvisioningErrorCode,
    message: string,
    /** The Admin API's HTTP status, for `admin-api-failed`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProvisioningError';
  }
}
