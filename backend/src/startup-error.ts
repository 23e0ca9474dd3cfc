/** What the operating system said, in words, for the errors a start-up meets (listen, open). */
const REASONS: Record<string, string> = {
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

export interface SystemError extends Error {
  hostname?: string;
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
}

export function systemReason(error: unknown): string {
  const { code, message } = error as SystemError;
  return (code && REASONS[code]) ?? message.split('\n')[0]!;
}

/** For a failed listen(): `127.0.0.1:3000`, bracketing IPv6 addresses. */
export function listenAddress(error: SystemError, fallbackHost: string, fallbackPort: number): string {
  const host = error.address ?? error.hostname ?? fallbackHost;
  return `${host.includes(':') ? `[${host}]` : host}:${error.port ?? fallbackPort}`;
}

/** listen() failed, or the name of the address to listen on did not resolve. */
export function isListenError(error: unknown): error is SystemError {
  const syscall = (error as SystemError | undefined)?.syscall;
  return syscall === 'listen' || syscall === 'getaddrinfo';
}
