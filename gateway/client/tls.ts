import { Agent } from 'undici';

/**
 * fetch that trusts `ca` (PEM, one certificate or several) instead of the system's CAs: for a
 * gateway whose certificate is self-signed, such as `npm start`'s (trust
 * data/gateway/node/ssl/kong-default-ca.crt) or compose's kong-lb-certs one (docs/https.md).
 */
export function fetchTrusting(ca: string | Buffer): (request: Request) => Promise<Response> {
  const dispatcher = new Agent({ connect: { ca } });
  // Node's fetch takes an undici dispatcher (not in the DOM's RequestInit)
  return (request) => fetch(request, { dispatcher } as RequestInit);
}
