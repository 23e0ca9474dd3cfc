// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
// Not alerts/alert-flow: Alertmanager gives its webhook a group_interval (500 ms there) to answer
// and sends again after it, and a busy worker's sink answered later than that.
import '../alerts/plan-limits-exporter.test.ts';
import '../client/example.test.ts';
import '../client/generated-types.test.ts';
import '../client/retry-policy.test.ts';
import '../control-plane/cluster-listener.test.ts';
import '../control-plane/snapshot-contract.test.ts';
import '../control-plane/snapshot-schema.test.ts';
import '../deploy/alert-rules.test.ts';
import '../deploy/compose.test.ts';
import '../deploy/compose-monitoring.test.ts';
import '../deploy/portal-database.test.ts';
import '../loader/stack-frames.test.ts';
