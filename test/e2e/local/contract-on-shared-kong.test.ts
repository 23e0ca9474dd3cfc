// The contract suite (test/e2e/portable/contract.test.ts) on a gateway shared with another team:
// E2E_SHARED_KONG=1 makes its target the local stack with team-inventory's file synced in and our
// hosts set (test/helpers/target.ts). The file runs here, in this worker (no nested ava); the whole
// portable suite runs so with `npm run test:e2e:shared`.
import '../portable/contract.test.ts';

// read by startTarget() in the imported file's before hook, which runs after this module's body
process.env.E2E_SHARED_KONG = '1';
