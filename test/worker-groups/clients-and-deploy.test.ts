// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../alerts/alert-flow.test.ts';
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
