// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../data-plane/plugins/acl.test.ts';
import '../data-plane/plugins/correlation-id.test.ts';
import '../data-plane/plugins/key-auth.test.ts';
import '../data-plane/plugins/prometheus.test.ts';
import '../data-plane/plugins/rate-limiting-sync-race.test.ts';
import '../data-plane/plugins/rate-limiting.test.ts';
import '../data-plane/plugins/request-size-limiting.test.ts';
import '../data-plane/plugins/request-termination.test.ts';
import '../data-plane/plugins/response-transformer.test.ts';
