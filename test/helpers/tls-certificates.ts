import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PEM certificate and its unencrypted private key. */
export interface PemPair {
  cert: string;
  key: string;
}

export interface CertificateOptions {
  /** The subject's CN, also its one DNS subjectAltName. */
  name: string;
  type?: 'rsa' | 'ecdsa';
  /** A CA certificate (basicConstraints CA:TRUE) rather than a server's. */
  ca?: boolean;
  /** Days valid from now. */
  days?: number;
}

const KEY_ARGS = { rsa: ['-newkey', 'rsa:2048'], ecdsa: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] };

/**
 * A self-signed certificate made by openssl for a test (ours, not Kong's spec fixtures). Not
 * synchronous: an RSA key takes openssl 0.1-0.5 s, which would hold every other test of the
 * worker group.
 */
export async function makeCertificate(options: CertificateOptions): Promise<PemPair> {
  const dir = await mkdtemp(join(tmpdir(), 'test-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const constraints = options.ca ? 'critical,CA:TRUE' : 'critical,CA:FALSE';
    await run('openssl', [
      'req', '-x509', ...KEY_ARGS[options.type ?? 'rsa'], '-nodes', '-keyout', key, '-out', cert,
      '-days', String(options.days ?? 30), '-subj', `/CN=${options.name}`,
      '-addext', `basicConstraints=${constraints}`, '-addext', `subjectAltName=DNS:${options.name}`,
    ]);
    return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
