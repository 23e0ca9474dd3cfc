import { X509Certificate, createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

// PEM certificates and keys as Kong's typedefs and entity checks read them through
// resty.openssl (kong/db/schema/typedefs.lua validate_certificate, validate_key). Messages never
// carry a key's text: keys are secrets.

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The first certificate of a PEM text (a chain's leaf), as openssl_x509.new reads it; undefined when it is not one. */
export function parseCertificate(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function parseKey(pem: string): KeyObject | undefined {
  try {
    return createPrivateKey(pem);
  } catch {
    return undefined;
  }
}

/** typedefs.certificate. */
export function certificateError(pem: string): string | undefined {
  try {
    new X509Certificate(pem);
    return undefined;
  } catch (error) {
    return `invalid certificate: x509.new: ${reason(error)}`;
  }
}

/** typedefs.key: a private key (unencrypted PEM). */
export function keyError(pem: string): string | undefined {
  try {
    createPrivateKey(pem);
    return undefined;
  } catch (error) {
    return `invalid key: pkey.new: ${reason(error)}`;
  }
}

const spki = (key: KeyObject): Buffer => key.export({ type: 'spki', format: 'der' });

/** The certificate's public key is the key's (certificates.lua: "certificate does not match key"). */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  const cert = parseCertificate(certPem);
  const key = parseKey(keyPem);
  return cert !== undefined && key !== undefined && spki(cert.publicKey).equals(spki(createPublicKey(key)));
}

/** The certificate's key type: rsa, ec, ed25519… */
export function certificateKeyType(pem: string): string | undefined {
  return parseCertificate(pem)?.publicKey.asymmetricKeyType;
}

/** ca_certificates.lua's transformation: the SHA-256 of the certificate's DER, in lowercase hex. */
export function certificateDigest(pem: string): string | undefined {
  const cert = parseCertificate(pem);
  return cert && createHash('sha256').update(cert.raw).digest('hex');
}
