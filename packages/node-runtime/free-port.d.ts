/**
 * A TCP port free on `host` now (127.0.0.1 by default), for a server that must be told its port
 * before it starts: picked below the kernel's ephemeral range, where neither listen(0) nor an
 * outgoing connection takes it meanwhile.
 */
export function freePort(host?: string): Promise<number>;
/**
 * The same, held (listened on) until `release()`: released just before the server that is to
 * bind it starts, no other pick takes it meanwhile.
 */
export function reservePort(host?: string): Promise<{ port: number; release(): Promise<void> }>;
