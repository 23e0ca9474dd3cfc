/** `send()` (a fetch of a request safe to repeat: GET, HEAD), sent once more when the connection closed before any answer. */
export function fetchOnceMore(send: () => Promise<Response>): Promise<Response>;
/**
 * Why a fetch failed, in words for a one-line error: a connection closed before any answer (", twice"
 * when `fetchOnceMore` sent it again), else the network error's code or message.
 */
export function networkFailureReason(error: unknown, options?: { sentTwice?: boolean }): string;
