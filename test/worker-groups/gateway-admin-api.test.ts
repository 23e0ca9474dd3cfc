// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../gateway/acl-api.test.ts';
import '../gateway/acl-invalidations.test.ts';
import '../gateway/admin-api-endpoints.test.ts';
import '../gateway/admin-api-listing.test.ts';
import '../gateway/admin-api-requests.test.ts';
import '../gateway/admin-api.test.ts';
import '../gateway/certificates-api.test.ts';
import '../gateway/entity-shapes.test.ts';
import '../gateway/plugin-config.test.ts';
