// The provisioning library's public entry (README.md): what the consumers CLI and the developer
// portal use. Nothing here prints or exits; every failure is a ProvisioningError with a code.
export { AdminApi } from './admin-api/admin-api.ts';
export type { AdminConnection } from './admin-api/client.ts';
export type { Consumer, EntityRef, KeyAuthCredential, Plugin } from './admin-api/entities.ts';
export {
  API_KEY_LENGTH,
  API_KEY_PATTERN,
  KEY_HASH_TAG,
  classifyApiKey,
  digestApiKey,
  generateApiKey,
  isHashedCredential,
  keyFingerprint,
  storedCredential,
  type ApiKeyClass,
} from './api-keys.ts';
export type { ConsumerDetails, ConsumerFilter, ConsumerSummary, IssuedKey, NewConsumer } from './consumers.ts';
export { escapeUnprintable } from './consumers.ts';
export { ProvisioningError, type ProvisioningErrorCode } from './errors.ts';
export { MAX_KEY_TTL_SECONDS, keySpec, type KeyExpiry, type KeyOptions, type KeySummary, type NewKey } from './key-credentials.ts';
export { DEFAULT_KEY_NAME, KEY_NAME_PATTERN, SCOPES, isScope, type Scope } from './key-tags.ts';
export type { AddedKey, ExpiringKey, HashKeysResult, RotateKeyOptions, RotatedKey } from './keys.ts';
export type { PlanAssignment } from './plan-assignment.ts';
export { isPlanPlugin, limitsOf, planPluginOf } from './plan-plugin.ts';
export { PLAN_NAMES, loadCatalogue, type Catalogue, type Limits, type PlanName } from './plans.ts';
export { Provisioning } from './provisioning.ts';
export { CONSUMER_GROUP, CONSUMER_TAG, KONG_YML_SELECT_TAG, isOurs, planOf, type ManagedConsumer } from './tags.ts';
