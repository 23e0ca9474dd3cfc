/**
 * Whether fetch failed because the server closed or reset the connection before any answer (not
 * a refusal, not a timeout): what a kept-alive connection that the server closes just as it is
 * reused gives, whatever the server's idle timeout.
 */
function closedBeforeAnswer(error) {
  const code = error?.cause?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * `send()` (a fetch of a request safe to repeat: GET, HEAD), sent once more when the connection
 * closed before any answer.
 */
export async function fetchOnceMore(send) {
  try {
    return await send();
  } catch (error) {
    if (closedBeforeAnswer(error)) return send();
    throw error;
  }
}

/**
 * Why a fetch failed, in words for a one-line error: a connection closed before any answer (", twice"
 * when `fetchOnceMore` sent it again), else the network error's code or message.
 */
export function networkFailureReason(error, { sentTwice = false } = {}) {
  if (closedBeforeAnswer(error)) return `the connection closed without an answer${sentTwice ? ', twice' : ''}`;
  return error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
}
