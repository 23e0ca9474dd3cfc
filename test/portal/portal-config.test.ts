// The portal's settings from the environment (docs/portal.md, "Settings"): PORTAL_SUPPORT_EMAIL,
// PORTAL_DATABASE_URL, the usage charts' source, PORTAL_KEYS_PER_ACCOUNT.
import test from 'ava';
import { readPortalConfig } from '../../portal/src/index.ts';

const base = { PORTAL_COOKIE_SECRET: 'a test secret of at least thirty-two characters', PORTAL_DATA_DIR: '/nonexistent-portal-data' };

test('PORTAL_SUPPORT_EMAIL: unset or empty is none; an address is kept; anything else stops the portal with its name', (t) => {
  t.is(readPortalConfig(base).supportEmail, undefined);
  t.is(readPortalConfig({ ...base, PORTAL_SUPPORT_EMAIL: '' }).supportEmail, undefined);
  t.is(readPortalConfig({ ...base, PORTAL_SUPPORT_EMAIL: 'plans@animal.store' }).supportEmail, 'plans@animal.store');
  for (const bad of ['plans', 'plans@animal', 'a b@animal.store', 'plans@animal.store?cc=x@evil.example', '"x"@animal.store']) {
    t.throws(() => readPortalConfig({ ...base, PORTAL_SUPPORT_EMAIL: bad }), { message: /^PORTAL_SUPPORT_EMAIL must be an email address, got / }, bad);
  }
});

test('PORTAL_PROMETHEUS_URL chooses the charts’ source; PORTAL_USAGE_SAMPLE_SECONDS is 1 to 3600 seconds (default 60)', (t) => {
  t.is(readPortalConfig(base).prometheusUrl, undefined);
  t.is(readPortalConfig(base).usageSampleSeconds, 60);
  t.is(readPortalConfig({ ...base, PORTAL_PROMETHEUS_URL: 'http://prometheus:9090/' }).prometheusUrl?.href, 'http://prometheus:9090/');
  t.is(readPortalConfig({ ...base, PORTAL_USAGE_SAMPLE_SECONDS: '15' }).usageSampleSeconds, 15);
  t.throws(() => readPortalConfig({ ...base, PORTAL_PROMETHEUS_URL: 'prometheus:9090' }), { message: /^PORTAL_PROMETHEUS_URL must be an http\(s\) URL, got / });
  for (const bad of ['0', '1.5', 'soon', '3601']) {
    t.throws(() => readPortalConfig({ ...base, PORTAL_USAGE_SAMPLE_SECONDS: bad }), { message: /^PORTAL_USAGE_SAMPLE_SECONDS must be a whole number/ }, bad);
  }
});

test('PORTAL_DATABASE_URL: unset or empty is SQLite; postgres(ql):// is the shared store; another scheme stops the portal', (t) => {
  t.is(readPortalConfig(base).databaseUrl, undefined);
  t.is(readPortalConfig({ ...base, PORTAL_DATABASE_URL: '' }).databaseUrl, undefined);
  for (const url of ['postgres://portal:pw@postgres:5432/portal', 'postgresql://portal@db/portal']) t.is(readPortalConfig({ ...base, PORTAL_DATABASE_URL: url }).databaseUrl, url);
  t.throws(() => readPortalConfig({ ...base, PORTAL_DATABASE_URL: 'mysql://portal:pw@db/portal' }), {
    message: 'PORTAL_DATABASE_URL must be a postgres:// or postgresql:// URL, got one starting "mysql"',
  });
});

test('without PORTAL_COOKIE_SECRET, a PostgreSQL store keeps the secret (no file in PORTAL_DATA_DIR)', (t) => {
  const { PORTAL_COOKIE_SECRET: _, ...noSecret } = base;
  t.is(readPortalConfig({ ...noSecret, PORTAL_DATABASE_URL: 'postgres://portal@db/portal' }).cookieSecret, undefined);
});

test('PORTAL_KEYS_PER_ACCOUNT: 10 unless set, a whole number from 1 to 100', (t) => {
  t.is(readPortalConfig(base).keysPerAccount, 10);
  t.is(readPortalConfig({ ...base, PORTAL_KEYS_PER_ACCOUNT: '' }).keysPerAccount, 10);
  t.is(readPortalConfig({ ...base, PORTAL_KEYS_PER_ACCOUNT: '3' }).keysPerAccount, 3);
  for (const bad of ['0', '2.5', 'many', '101']) {
    t.throws(() => readPortalConfig({ ...base, PORTAL_KEYS_PER_ACCOUNT: bad }), { message: /^PORTAL_KEYS_PER_ACCOUNT must be a whole number from 1 to 100, got / }, bad);
  }
});

// fetch refuses a URL with credentials, with an error that quotes the URL: an Admin API behind a
// proxy's Basic auth gets them as a header, and no message ever prints them.
test('KONG_ADMIN_URL: user:password@ becomes Authorization: Basic, the URL keeps neither; a bad URL with "@" is not echoed', (t) => {
  t.like(readPortalConfig(base), { adminUrl: 'http://127.0.0.1:8001', adminHeaders: undefined });
  const config = readPortalConfig({ ...base, KONG_ADMIN_URL: 'https://portal:s%40cret@kong-admin.internal:8444/' });
  t.is(config.adminUrl, 'https://kong-admin.internal:8444');
  t.deepEqual(config.adminHeaders, { Authorization: `Basic ${Buffer.from('portal:s@cret').toString('base64')}` });
  const error = t.throws(() => readPortalConfig({ ...base, KONG_ADMIN_URL: 'ftp://portal:S3cretPW@kong' }));
  t.is(error.message, 'KONG_ADMIN_URL must be an http(s) URL, got a value with "@" (not shown: it may hold a password)');
});
