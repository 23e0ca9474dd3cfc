import { writeFileSync } from 'node:fs';
import { SNAPSHOT_SCHEMA_FILE, snapshotSchemaText } from '../control-plane/snapshot/snapshot-schema.ts';

// `npm run generate:snapshot-schema`: writes gateway/local/snapshot.schema.json from the entity
// definitions (test/control-plane/snapshot-schema.test.ts fails when the committed file differs).
writeFileSync(SNAPSHOT_SCHEMA_FILE, snapshotSchemaText());
console.log(`wrote ${SNAPSHOT_SCHEMA_FILE}`);
