// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../deck/acls.test.ts';
import '../deck/certificates.test.ts';
import '../deck/hashed-keys.test.ts';
import '../deck/lint.test.ts';
import '../deck/provisioning-visible.test.ts';
import '../deck/round-trip.test.ts';
import '../deck/shared-kong.test.ts';
import '../deck/validate-and-diff.test.ts';
