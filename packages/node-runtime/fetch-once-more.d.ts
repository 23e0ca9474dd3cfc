/**
 * Whether fetch failed because the server closed or reset the connection before any answer (not
 * a refusal, not a timeout).
 */
export function closedBeforeAnswer(error: unknown): boolean;
/** `send()` (a fetch of a request safe to repeat: GET, HEAD), sent once more when the connection closed before any answer. */
export function fetchOnceMore(send: () => Promise<Response>): Promise<Response>;
