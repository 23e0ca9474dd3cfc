/** Exit codes: 0 done, 1 the command failed (Admin API, network, state), 2 the command line is wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A command line the CLI cannot run: exit 2, nothing sent to the Admin API. */
export class UsageError extends Error {}
