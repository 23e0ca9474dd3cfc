// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../e2e/local/ban.test.ts';
import '../e2e/local/client.test.ts';
import '../e2e/local/consumer-group.test.ts';
import '../e2e/local/credential-ttl.test.ts';
import '../e2e/local/gateway-errors.test.ts';
import '../e2e/local/hashed-keys.test.ts';
import '../e2e/local/https-only.test.ts';
import '../e2e/local/rate-limits.test.ts';
import '../e2e/local/shared-kong.test.ts';
import '../e2e/local/upstream-view.test.ts';
