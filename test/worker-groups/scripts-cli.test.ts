// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../scripts/consumers-cli.test.ts';
import '../scripts/plans-follow-policy.test.ts';
import '../scripts/scoped-keys-cli.test.ts';
import '../scripts/usage-live.test.ts';
import '../scripts/usage-nodes.test.ts';
import '../scripts/usage-prometheus.test.ts';
import '../scripts/usage-show.test.ts';
