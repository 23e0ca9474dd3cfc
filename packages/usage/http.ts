import { fetchOnceMore, networkFailureReason } from '../node-runtime/fetch-once-more.js';

/** What an HTTP helper of the usage command needs: one line naming the server when it fails. */
export class ServerError extends Error {}

/** `url` without user:password, for messages. */
export function displayUrl(url: URL): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.href.replace(/\/$/, '');
}

/** Basic credentials written in a URL (http://user:pass@host), which fetch refuses, as a header. */
function credentialsHeader(url: URL): Record<string, string> {
  if (!url.username && !url.password) return {};
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}

/**
 * GET `url` and read at most `maxBytes` of its body as text; a network failure, a timeout or a
 * larger body is a ServerError that says `what` failed (never the credentials).
 */
export async function getText(
  url: URL,
  what: string,
  { timeoutMs, maxBytes, headers = {} }: { timeoutMs: number; maxBytes: number; headers?: Record<string, string> },
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  target.username = '';
  target.password = '';
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetchOnceMore(() => fetch(target, { headers: { ...credentialsHeader(url), ...headers }, signal }));
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : networkFailureReason(error, { sentTwice: true });
    throw new ServerError(`cannot reach ${what}: ${reason}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += (chunk as Uint8Array).byteLength;
      if (size > maxBytes) {
        await response.body?.cancel();
        throw new ServerError(`${what} sent more than ${maxBytes / 2 ** 20} MiB`);
      }
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
  } catch (error) {
    if (error instanceof ServerError) throw error;
    throw new ServerError(`${what}: the answer broke off: ${(error as Error).message}`);
  }
  return { status: response.status, body: Buffer.concat(chunks).toString('utf8') };
}
