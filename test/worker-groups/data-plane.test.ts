// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../data-plane/balancer.test.ts';
import '../data-plane/body-limit.test.ts';
import '../data-plane/describe.test.ts';
import '../data-plane/edge-bans-redis.test.ts';
import '../data-plane/edge-plugin.test.ts';
import '../data-plane/edge-plugin-unit.test.ts';
import '../data-plane/errors.test.ts';
import '../data-plane/lua-specs.test.ts';
import '../data-plane/node.test.ts';
import '../data-plane/pdk.test.ts';
import '../data-plane/plugins.test.ts';
import '../data-plane/proxy-headers.test.ts';
import '../data-plane/request-headers.test.ts';
import '../data-plane/routing.test.ts';
import '../data-plane/snapshot-delivery.test.ts';
import '../data-plane/test-clock.test.ts';
import '../data-plane/upstream-keepalive.test.ts';
