// The portal's settings from the environment (docs/portal.md, "Settings"): PORTAL_SUPPORT_EMAIL.
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
