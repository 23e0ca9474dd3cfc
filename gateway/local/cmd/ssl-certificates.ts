import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

// openssl runs beside the event loop: an RSA key takes it 0.1-0.5 s, and the control plane
// (the Admin API, a cluster's other nodes) goes on meanwhile.
const run = promisify(execFile);

/** The certificate/key pairs the proxy's ssl listeners serve: files, in order. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** <prefix>/ssl/kong-default.crt and friends, as kong/conf_loader names them. */
export function defaultCertificatePaths(prefix: string): { rsa: CertificatePair; ecdsa: CertificatePair; trust: string } {
  const ssl = join(prefix, 'ssl');
  return {
    // ours, not Kong's: both self-signed certificates in one file for clients' --cacert, as a
    // client is served the RSA or the ECDSA one depending on the signature algorithms it offers
    trust: join(ssl, 'kong-default-ca.crt'),
    rsa: { cert: join(ssl, 'kong-default.crt'), key: join(ssl, 'kong-default.key') },
    ecdsa: { cert: join(ssl, 'kong-default-ecdsa.crt'), key: join(ssl, 'kong-default-ecdsa.key') },
  };
}

// kong/cmd/utils/prefix_handler.lua gen_default_ssl_cert: this subject as issuer too, 20 years,
// not a CA (critical), serverAuth+clientAuth, a subject key identifier, a random 128-bit serial.
const OPENSSL_REQ_CONFIG = `[req]
distinguished_name = dn
x509_extensions = ext
prompt = no
[dn]
C = US
ST = California
L = San Francisco
O = Kong
OU = IT Department
CN = localhost
[ext]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
`;

async function generate(pair: CertificatePair, keyArgs: string[]): Promise<void> {
  const config = `${pair.cert}.cnf`;
  writeFileSync(config, OPENSSL_REQ_CONFIG);
  try {
    await run(
      'openssl',
      ['req', '-x509', '-config', config, ...keyArgs, '-nodes', '-keyout', pair.key, '-out', pair.cert, '-days', String(20 * 365), '-set_serial', `0x${randomBytes(16).toString('hex')}`],
    );
  } finally {
    await rm(config, { force: true });
  }
  chmodSync(pair.key, 0o600);
}

/**
 * The default certificates, RSA 2048 and ECDSA P-256, made when neither file of a pair exists
 * (as Kong's gen_default_ssl_cert: a restarted node serves the same ones). Answers both pairs,
 * RSA first, as the template lists them.
 */
export async function ensureDefaultCertificates(prefix: string): Promise<CertificatePair[]> {
  const { rsa, ecdsa, trust } = defaultCertificatePaths(prefix);
  mkdirSync(join(prefix, 'ssl'), { recursive: true });
  const missing = (pair: CertificatePair) => !existsSync(pair.cert) && !existsSync(pair.key);
  await Promise.all([
    missing(rsa) ? generate(rsa, ['-newkey', 'rsa:2048']) : undefined,
    missing(ecdsa) ? generate(ecdsa, ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']) : undefined,
  ]);
  writeFileSync(trust, [rsa.cert, ecdsa.cert].map((path) => readFileSync(path, 'utf8')).join(''));
  return [rsa, ecdsa];
}

/**
 * The intermediate suite's dhparams (kong/conf_loader/constants.lua:33, "ffdhe2048"), written
 * once to <prefix>/ssl/ffdhe2048.pem as prefix_handler.lua's gen_default_dhparams does.
 */
export async function ensureDhParams(prefix: string): Promise<string> {
  const path = join(prefix, 'ssl', 'ffdhe2048.pem');
  if (!existsSync(path)) {
    mkdirSync(join(prefix, 'ssl'), { recursive: true });
    writeFileSync(path, (await run('openssl', ['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'group:ffdhe2048'])).stdout);
  }
  return path;
}

const PEM = /-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/;

/** A path, a PEM, or a base64-encoded PEM (kong/conf_loader/parse.lua): its PEM text. */
function pemOf(variable: string, entry: string): { pem: string; path: string | undefined } {
  if (existsSync(entry) && statSync(entry).isFile()) return { pem: readFileSync(entry, 'utf8'), path: entry };
  if (PEM.test(entry)) return { pem: entry, path: undefined };
  const decoded = Buffer.from(entry, 'base64').toString('utf8');
  if (PEM.test(decoded)) return { pem: decoded, path: undefined };
  throw new Error(`${variable}: no such file, and not a PEM: ${entry.length > 80 ? `${entry.slice(0, 80)}…` : entry}`);
}

/**
 * KONG_SSL_CERT / KONG_SSL_CERT_KEY: as many of each, checked as Kong's conf loader checks them
 * (a certificate, a key, the key matching its certificate). Contents are written to
 * <prefix>/ssl/proxy-<i>.crt/.key (prefix_handler.lua write_content_set_path).
 */
export function configuredCertificates(prefix: string, certs: string[], keys: string[]): CertificatePair[] {
  if (certs.length !== keys.length) {
    throw new Error(`KONG_SSL_CERT and KONG_SSL_CERT_KEY must list as many entries each, got ${certs.length} and ${keys.length}`);
  }
  return certs.map((certEntry, i) => {
    const cert = pemOf('KONG_SSL_CERT', certEntry);
    const key = pemOf('KONG_SSL_CERT_KEY', keys[i]!);
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(cert.pem);
    } catch (error) {
      throw new Error(`KONG_SSL_CERT: failed loading certificate ${i + 1}: ${(error as Error).message}`);
    }
    let privateKey;
    try {
      privateKey = createPrivateKey(key.pem);
    } catch (error) {
      throw new Error(`KONG_SSL_CERT_KEY: failed loading key ${i + 1}: ${(error as Error).message}`);
    }
    if (!x509.checkPrivateKey(privateKey)) throw new Error(`KONG_SSL_CERT_KEY: key ${i + 1} does not match certificate ${i + 1} of KONG_SSL_CERT`);
    const pair: CertificatePair = { cert: cert.path ?? join(prefix, 'ssl', `proxy-${i + 1}.crt`), key: key.path ?? join(prefix, 'ssl', `proxy-${i + 1}.key`) };
    mkdirSync(join(prefix, 'ssl'), { recursive: true });
    if (!cert.path) writeFileSync(pair.cert, cert.pem);
    if (!key.path) writeFileSync(pair.key, key.pem, { mode: 0o600 });
    return pair;
  });
}
