/** Header names from kong/constants.lua (HEADERS). */
export const KongHeaders = {
  proxyLatency: 'X-Kong-Proxy-Latency',
  responseLatency: 'X-Kong-Response-Latency',
  upstreamLatency: 'X-Kong-Upstream-Latency',
  adminLatency: 'X-Kong-Admin-Latency',
  consumerId: 'X-Consumer-ID',
  consumerCustomId: 'X-Consumer-Custom-ID',
  consumerUsername: 'X-Consumer-Username',
  credentialIdentifier: 'X-Credential-Identifier',
  anonymous: 'X-Anonymous-Consumer',
  requestId: 'X-Kong-Request-Id',
  via: 'Via',
  server: 'Server',
} as const;

/** A header map keyed by lower-case name, as ngx.req.get_headers() exposes it. */
export type HeaderMap = Map<string, string | string[]>;

export function headerMapFrom(raw: Record<string, string | string[] | undefined>): HeaderMap {
  const map: HeaderMap = new Map();
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) map.set(name.toLowerCase(), value);
  }
  return map;
}

/** First value of a header (kong.request.get_header semantics). */
export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
