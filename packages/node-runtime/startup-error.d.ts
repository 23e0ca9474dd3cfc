export interface SystemError extends Error {
  hostname?: string;
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
}

/** What the operating system said, in words (`address already in use`), else the message's first line. */
export function systemReason(error: unknown): string;
/** For a failed listen(): `127.0.0.1:3000`, bracketing IPv6 addresses. */
export function listenAddress(error: SystemError, fallbackHost: string, fallbackPort: number): string;
/** listen() failed, or the name of the address to listen on did not resolve. */
export function isListenError(error: unknown): error is SystemError;
