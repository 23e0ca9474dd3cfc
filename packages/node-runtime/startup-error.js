/** What the operating system said, in words, for the errors a start-up meets (listen, open). */
const REASONS = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied',
  ENOTFOUND: 'host name not found',
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'a path component is not a directory',
  EEXIST: 'a file is in the way',
  ECONNREFUSED: 'connection refused',
};

/** @param {unknown} error */
export function systemReason(error) {
  const { code, message } = /** @type {{ code?: string; message?: string }} */ (error ?? {});
  return (code && REASONS[code]) ?? String(message ?? error).split('\n')[0];
}

/**
 * For a failed listen(): `127.0.0.1:3000`, bracketing IPv6 addresses.
 * @param {import('./startup-error.js').SystemError} error
 * @param {string} fallbackHost
 * @param {number} fallbackPort
 */
export function listenAddress(error, fallbackHost, fallbackPort) {
  const host = error.address ?? error.hostname ?? fallbackHost;
  return `${host.includes(':') ? `[${host}]` : host}:${error.port ?? fallbackPort}`;
}

/**
 * listen() failed, or the name of the address to listen on did not resolve.
 * @param {unknown} error
 */
export function isListenError(error) {
  const syscall = typeof error === 'object' && error !== null ? /** @type {{ syscall?: unknown }} */ (error).syscall : undefined;
  return syscall === 'listen' || syscall === 'getaddrinfo';
}
