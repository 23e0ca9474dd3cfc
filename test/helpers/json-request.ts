// fetch with JSON in and out, in a module of its own: what imports it (the portable suite against
// a running deployment) loads neither the backend nor the gateway, as ./backend.ts would.

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** fetch + JSON body (or the raw text when it is not JSON). */
export async function request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<JsonResponse> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = await fetch(url, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text so the assertion shows it
  }
  return { status: response.status, headers: response.headers, body };
}
