import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** A self-signed certificate made by openssl for a test (ours, not Kong's spec fixtures). */
export function makeCertificate(options: CertificateOptions): PemPair {
  const dir = mkdtempSync(join(tmpdir(), 'test-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const constraints = options.ca ? 'critical,CA:TRUE' : 'critical,CA:FALSE';
    execFileSync('openssl', [
      'req', '-x509', ...KEY_ARGS[options.type ?? 'rsa'], '-nodes', '-keyout', key, '-out', cert,
      '-days', String(options.days ?? 30), '-subj', `/CN=${options.name}`,
      '-addext', `basicConstraints=${constraints}`, '-addext', `subjectAltName=DNS:${options.name}`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
