/** One line per account action: the account, the action, the key's fingerprint; never a key, a password or a token. */
export type AuditLog = (entry: { account: string; action: string; fingerprint?: string; ip?: string }) => void;

export const consoleAudit: AuditLog = ({ account, action, fingerprint, ip }) =>
  console.log(`[portal] account=${account} action=${action}${fingerprint ? ` key=${fingerprint}` : ''}${ip ? ` ip=${ip}` : ''}`);
