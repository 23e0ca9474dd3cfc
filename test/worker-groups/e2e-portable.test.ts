// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker, against
// one local stack (test/helpers/target.ts), as they run against one deployment.
import '../e2e/portable/auth.test.ts';
import '../e2e/portable/cli-flows.test.ts';
import '../e2e/portable/contract.test.ts';
import '../e2e/portable/deprecation.test.ts';
import '../e2e/portable/headers-and-errors.test.ts';
import '../e2e/portable/idempotency.test.ts';
import '../e2e/portable/pets-trailing-slash.test.ts';
import '../e2e/portable/scoped-keys.test.ts';
