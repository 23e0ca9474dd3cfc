import { request } from 'node:http';
import { progress } from './load.ts';
import { peakRss } from './processes.ts';

const BODY_BYTES = 256 * 1024 * 1024;
const PIECE = Buffer.alloc(1024 * 1024, 0x20);

interface LargeBody {
  chunked: boolean;
  status: number;
  /** How much of the body the client had written when the answer came, MB. */
  sentMb: number;
  ms: number;
}

export interface LargeBodiesResult {
  /** One body with Content-Length, sent alone: how early the 413 comes with a worker to itself. */
  alone: LargeBody;
  bodies: LargeBody[];
  /** The gateway's processes' RSS added up, at its highest while the bodies were sent, MB. */
  peakRssMb: number;
}

/** One 256 MB POST, written as fast as the gateway takes it, until the gateway answers. */
function bigPost(proxyUrl: string, key: string, chunked: boolean): Promise<{ status: number; sentMb: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(BODY_BYTES);
    const req = request(`${proxyUrl}/v1/pets`, { method: 'POST', headers });
    let sent = 0;
    let answered = false;
    const write = () => {
      while (!answered && sent < BODY_BYTES) {
        sent += PIECE.length;
        if (!req.write(PIECE)) {
          req.once('drain', write);
          return;
        }
      }
      if (!answered) req.end();
    };
    req.on('response', (res) => {
      answered = true;
      res.resume();
      res.once('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, sentMb: Math.round(sent / 1024 / 1024), ms: Math.round(performance.now() - started) });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    write();
  });
}

/**
 * Four concurrent 256 MB request bodies (two with Content-Length, two chunked) against the full
 * chain: each must get the body limit's 413, and the gateway's memory stay bounded. A
 * Content-Length over the limit is refused before the body is read; a chunked body is read
 * (nginx buffers past 8 KB to a temporary file) and then measured, as Kong's
 * request-size-limiting does (kong/plugins/request-size-limiting/handler.lua).
 */
export async function benchLargeBodies(proxyUrl: string, key: string, gatewayPids: () => number[]): Promise<LargeBodiesResult> {
  // Concurrent, a Content-Length body's 413 can wait behind its worker's loop reading (or
  // discarding) another 256 MB from this fast local client, so how early it comes is read alone.
  progress('one 256 MB request body with Content-Length, alone');
  const alone = { chunked: false, ...(await bigPost(proxyUrl, key, false)) };
  progress('4 concurrent 256 MB request bodies');
  const sampler = peakRss(gatewayPids);
  let peakRssMb = 0;
  const results = await Promise.all([false, false, true, true].map((chunked) => bigPost(proxyUrl, key, chunked))).finally(() => {
    peakRssMb = sampler.stop();
  });
  const bodies = results.map((r, i) => ({ chunked: i >= 2, ...r }));
  progress(`large bodies: alone ${alone.status} after ${alone.sentMb} MB; ${bodies.map((b) => `${b.status} after ${b.sentMb} MB`).join(', ')}; peak RSS ${peakRssMb} MB`);
  return { alone, bodies, peakRssMb };
}
