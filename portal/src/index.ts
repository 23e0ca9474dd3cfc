// The developer portal's public entry, for what runs it in-process (tests, the stack) and the
// consumers CLI's invite command; portal/src/main.ts is the process.
export { createPortalApp, type PortalAppOptions } from './app.ts';
export { readPortalConfig, readPortalListen, type PortalConfig } from './config.ts';
export { inviteByEmail } from './invitations.ts';
export { purgeExpired, startPortal, type RunningPortal } from './server.ts';
export { HashSlots, HashSlotsFull, type HashSlotLimits } from './hash-slots.ts';
export { SCRYPT_COST, type ScryptCost } from './passwords.ts';
