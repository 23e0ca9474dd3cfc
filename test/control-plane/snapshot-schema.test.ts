import { readFileSync } from 'node:fs';
import test from 'ava';
import { SNAPSHOT_SCHEMA_FILE, snapshotSchemaText } from '../../gateway/local/data-plane-entry.ts';

// snapshot.schema.json is generated from the entity definitions (their `snapshot` projections
// over their fields' schemas), and the data plane checks every snapshot against the file: the
// committed file must be what the definitions generate.

test('the committed snapshot.schema.json is the one the entity definitions generate', (t) => {
  t.is(readFileSync(SNAPSHOT_SCHEMA_FILE, 'utf8'), snapshotSchemaText(), 'run `npm run generate:snapshot-schema` and commit the result');
});

test('every entity type the data plane receives is in the schema, with each field it is sent', (t) => {
  const schema = JSON.parse(snapshotSchemaText()) as {
    required: string[];
    $defs: Record<string, { required: string[]; properties: Record<string, unknown> }>;
  };
  t.deepEqual(schema.required, ['snapshot_version', 'config_version', 'config_hash', 'certificates', 'snis', 'services', 'routes', 'consumers', 'keyauth_credentials', 'acls', 'plugins']);
  t.deepEqual(schema.$defs.acl?.required, ['id', 'consumer', 'group', 'tags']);
  t.deepEqual(schema.$defs.sni?.properties.certificate, { $ref: '#/$defs/reference', 'x-foreign': 'certificates' });
  t.deepEqual(schema.$defs.acl?.properties.consumer, { $ref: '#/$defs/reference', 'x-foreign': 'consumers' });
  // A fallback makes the field non-null: the data plane never sees a null timeout.
  t.deepEqual(schema.$defs.service?.properties.connect_timeout, { type: 'integer', minimum: 1, maximum: 2147483646 });
});
