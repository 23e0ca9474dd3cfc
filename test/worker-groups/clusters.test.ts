// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../cluster/bans-and-failures.test.ts';
import '../cluster/shared-limits.test.ts';
import '../cluster/usage-metrics.test.ts';
