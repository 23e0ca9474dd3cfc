import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { snapshotSchemaText } from '../control-plane/snapshot/snapshot-schema.ts';

/** gateway/local/snapshot.schema.json: the contract between the planes, as the entity definitions give it. */
export const SNAPSHOT_SCHEMA_FILE = fileURLToPath(new URL('../snapshot.schema.json', import.meta.url));

// `npm run generate:snapshot-schema`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SNAPSHOT_SCHEMA_FILE, snapshotSchemaText());
  console.log(`wrote ${SNAPSHOT_SCHEMA_FILE}`);
}
