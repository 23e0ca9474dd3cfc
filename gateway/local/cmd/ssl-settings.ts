/**
 * KONG_SSL_CIPHER_SUITE, KONG_SSL_CIPHERS and KONG_SSL_PROTOCOLS as kong/conf_loader/parse.lua
 * (3.9.3, :420-459) applies them: a named suite of kong/conf_loader/constants.lua:15-75 sets the
 * ciphers, protocols, prefer_server_ciphers and DH group, ignoring the other two; `custom` takes
 * them as given (kong_defaults.lua:57-61: ssl_protocols "TLSv1.2 TLSv1.3",
 * ssl_prefer_server_ciphers on, no ciphers line, no DH group).
 */
export interface TlsSettings {
  /** ssl_ciphers; undefined: no line (OpenSSL's defaults; TLS 1.3's suites are not set there). */
  ciphers: string | undefined;
  protocols: string;
  preferServerCiphers: 'on' | 'off';
  /** The ffdhe2048 group (intermediate only). */
  dhparam: boolean;
}

type CipherSuite = 'modern' | 'intermediate' | 'old' | 'custom';

const INTERMEDIATE = [
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
  'DHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES256-GCM-SHA384', 'DHE-RSA-CHACHA20-POLY1305',
];
const OLD = [
  ...INTERMEDIATE, 'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-RSA-AES128-SHA256', 'ECDHE-ECDSA-AES128-SHA', 'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA384', 'ECDHE-RSA-AES256-SHA384', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-RSA-AES256-SHA', 'DHE-RSA-AES128-SHA256',
  'DHE-RSA-AES256-SHA256', 'AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA256', 'AES256-SHA256', 'AES128-SHA', 'AES256-SHA',
  'DES-CBC3-SHA',
];

const SUITES: Record<Exclude<CipherSuite, 'custom'>, TlsSettings> = {
  modern: { ciphers: undefined, protocols: 'TLSv1.3', preferServerCiphers: 'off', dhparam: false },
  intermediate: { ciphers: INTERMEDIATE.join(':'), protocols: 'TLSv1.2 TLSv1.3', preferServerCiphers: 'off', dhparam: true },
  old: { ciphers: OLD.join(':'), protocols: 'TLSv1 TLSv1.1 TLSv1.2 TLSv1.3', preferServerCiphers: 'on', dhparam: false },
};

const PROTOCOLS = new Set(['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']);
const CIPHER_LIST = /^[A-Za-z0-9_+:!@=.-]+$/;

/** The settings to render; throws an Error naming the variable when a value cannot be used. */
export function tlsSettings(env: { suite?: string; ciphers?: string; protocols?: string }): TlsSettings {
  const suite = env.suite ?? 'intermediate';
  if (suite === 'fips') throw new Error('KONG_SSL_CIPHER_SUITE: fips needs a FIPS build of OpenSSL (Kong Enterprise); not supported by the local gateway');
  if (suite !== 'custom') {
    if (!Object.hasOwn(SUITES, suite)) throw new Error(`KONG_SSL_CIPHER_SUITE: Undefined cipher suite ${suite} (modern, intermediate, old or custom)`);
    return SUITES[suite as keyof typeof SUITES];
  }
  const protocols = (env.protocols ?? 'TLSv1.2 TLSv1.3').trim().split(/\s+/);
  const unknown = protocols.find((protocol) => !PROTOCOLS.has(protocol));
  if (unknown !== undefined) throw new Error(`KONG_SSL_PROTOCOLS: unknown protocol ${JSON.stringify(unknown)} (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)`);
  const ciphers = env.ciphers?.trim();
  if (ciphers !== undefined && !CIPHER_LIST.test(ciphers)) throw new Error(`KONG_SSL_CIPHERS: expected an OpenSSL cipher list, got ${JSON.stringify(ciphers)}`);
  return { ciphers: ciphers || undefined, protocols: protocols.join(' '), preferServerCiphers: 'on', dhparam: false };
}
