// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../backend/idempotency.test.ts';
import '../backend/integer-params.test.ts';
import '../backend/lifecycle.test.ts';
import '../backend/orders.test.ts';
import '../backend/page-cache.test.ts';
import '../backend/pagination.test.ts';
import '../backend/pets.test.ts';
import '../backend/postgres.test.ts';
import '../backend/repositories.test.ts';
import '../backend/request-errors.test.ts';
