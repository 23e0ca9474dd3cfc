// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../scripts/api-keys.test.ts';
import '../scripts/build-lock.test.ts';
import '../scripts/consumers-cli-usage-errors.test.ts';
import '../scripts/ci-totals.test.ts';
import '../scripts/deck-env.test.ts';
import '../scripts/hashed-keys-kong-shape.test.ts';
import '../scripts/kong-admin-types.test.ts';
import '../scripts/plan-plugin-kong-shape.test.ts';
import '../scripts/provisioning-errors.test.ts';
import '../scripts/provisioning-faults.test.ts';
import '../scripts/rotate-key-kong-shape.test.ts';
import '../scripts/scoped-keys-library.test.ts';
import '../scripts/prerequisites.test.ts';
import '../scripts/usage-fake-admin.test.ts';
import '../node-runtime/free-port.test.ts';
