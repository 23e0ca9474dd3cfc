// Calling the API with the typed client:
//   ANIMAL_STORE_KEY=ask_… node --import tsx gateway/client/example.ts
// ANIMAL_STORE_URL defaults to the local stack (`npm start`): http://127.0.0.1:8000/v1. Over TLS,
// with a self-signed certificate, name the CA file to trust (docs/https.md):
//   ANIMAL_STORE_URL=https://localhost:8443/v1 ANIMAL_STORE_CA_FILE=data/gateway/node/ssl/kong-default-ca.crt
import { readFileSync } from 'node:fs';
import { ApiError, ApiKeyBannedError, NetworkError, createAnimalStoreClient } from './client.ts';

const apiKey = process.env.ANIMAL_STORE_KEY;
if (!apiKey) {
  console.error('error: set ANIMAL_STORE_KEY (npm run consumers -- create --username you --plan free)');
  process.exit(2);
}
const client = createAnimalStoreClient({
  baseUrl: process.env.ANIMAL_STORE_URL ?? 'http://127.0.0.1:8000/v1',
  apiKey,
  retry: { maxAttempts: 5, timeBudgetMs: 30_000 },
  ...(process.env.ANIMAL_STORE_CA_FILE ? { ca: readFileSync(process.env.ANIMAL_STORE_CA_FILE) } : {}),
});

try {
  // A POST gets an Idempotency-Key: if it has to be retried, the pet is still created once.
  // Errors are thrown, so `data` is set (openapi-fetch still types it as possibly undefined).
  const { data: pet, response } = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
  console.log(`created pet ${pet!.id} at ${response.headers.get('location')}`);

  let available = 0;
  for await (const _ of client.items('/pets', { status: 'available', limit: 100 })) available++;
  console.log(`${available} pet(s) available`);
} catch (error) {
  if (error instanceof ApiKeyBannedError) {
    console.error(`error: this key is banned until ${error.bannedUntil.toISOString()}`);
  } else if (error instanceof ApiError) {
    console.error(`error: ${error.status} ${error.code}: ${error.message}`);
  } else if (error instanceof NetworkError) {
    console.error(`error: ${error.message}`);
  } else {
    throw error;
  }
  process.exit(1);
}
