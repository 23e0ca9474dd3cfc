import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { progress } from './load.ts';

const BODY_BYTES = 256 * 1024 * 1024;
const PIECE = Buffer.alloc(1024 * 1024, 0x20);

export interface LargeBodiesResult {
  statuses: number[];
  /** How much of each body the client had written when the answer came. */
  sentMbAtAnswer: number[];
  slowestAnswerMs: number;
  peakRssMb: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
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
 * chain: each must get request-size-limiting's 413 early, and the gateway's RSS stay bounded.
 */
export async function benchLargeBodies(proxyUrl: string, key: string, gatewayPid: number): Promise<LargeBodiesResult> {
  progress('4 concurrent 256 MB request bodies');
  let peakRssMb = rssMb(gatewayPid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(gatewayPid))), 20);
  try {
    const results = await Promise.all([false, false, true, true].map((chunked) => bigPost(proxyUrl, key, chunked)));
    peakRssMb = Math.max(peakRssMb, rssMb(gatewayPid));
    return {
      statuses: results.map((r) => r.status),
      sentMbAtAnswer: results.map((r) => r.sentMb),
      slowestAnswerMs: Math.max(...results.map((r) => r.ms)),
      peakRssMb,
    };
  } finally {
    clearInterval(sampler);
  }
}
