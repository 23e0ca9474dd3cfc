// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../gateway/balancer-malformed-http.test.ts';
import '../gateway/balancer-nodes.test.ts';
import '../gateway/key-auth.test.ts';
import '../gateway/known-differences.test.ts';
import '../gateway/plugins-and-precedence.test.ts';
import '../gateway/prometheus.test.ts';
import '../gateway/rate-limiting.test.ts';
import '../gateway/raw-http.test.ts';
import '../gateway/routing-and-proxy.test.ts';
