// The portal's invitations as the consumers CLI's `invite` writes them: a public entry of its own,
// as index.ts imports the whole portal app (koa, koa-body, its pages; ~0.5 CPU-s in each run of
// the CLI, whatever its command).
export { isAccountEmail } from './accounts.ts';
export { inviteByEmail } from './invitations.ts';
