// The contract suite (test/e2e/portable/contract.test.ts, headers-and-errors.test.ts) over TLS:
// E2E_TLS=1 makes its target the local stack as production runs kong.yml, https only, with every
// call over https trusting the node's default certificates (test/helpers/target.ts); plain HTTP
// would be answered 426. The two files run here, in this worker (no nested ava, no worker per
// file); the whole portable suite runs so with `npm run test:e2e:tls`.
import '../portable/contract.test.ts';
import '../portable/headers-and-errors.test.ts';

// read by startTarget() in the imported files' before hooks, which run after this module's body
process.env.E2E_TLS = '1';
