/**
 * Polls `condition` every `intervalMs` until it holds, for state another process reaches on its
 * own (a lock a server takes, a row it writes): nothing to inject a clock into. Fails with `what`
 * after `timeoutMs` instead of leaving the test to ava's timeout.
 */
export async function pollUntil(
  what: string,
  condition: () => Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
