// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../e2e/local/ban.test.ts';
import '../e2e/local/client.test.ts';
import '../e2e/local/consumer-group.test.ts';
import '../e2e/local/credential-ttl.test.ts';
import '../e2e/local/gateway-errors.test.ts';
import '../deck/hashed-keys.test.ts';
import '../deck/provisioning-visible.test.ts';
import '../backend/lifecycle.test.ts';
