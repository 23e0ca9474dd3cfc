// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../gateway/acl-declarative.test.ts';
import '../gateway/certificates-proxy.test.ts';
import '../gateway/declarative-config.test.ts';
import '../gateway/https.test.ts';
import '../gateway/kong-pdk-semantics.test.ts';
import '../gateway/persistence-and-reload.test.ts';
import '../gateway/plugin-shorthands.test.ts';
import '../gateway/refused-credentials.test.ts';
import '../gateway/schemas-vs-kong.test.ts';
import '../gateway/serviceless-routes.test.ts';
import '../gateway/sni.test.ts';
import '../gateway/stored-entities.test.ts';
import '../gateway/streaming.test.ts';
import '../gateway/tls-settings.test.ts';
import '../gateway/upstream-failures.test.ts';
