// test/loader/worker-groups.js: in a whole run, these files' tests run here, in one worker.
import '../portal/portal-config.test.ts';
import '../portal/portal-emails.test.ts';
import '../portal/portal-hostile-forms.test.ts';
import '../portal/portal-gateway.test.ts';
import '../portal/portal-hash-slots.test.ts';
import '../portal/portal-http.test.ts';
import '../portal/portal-reference.test.ts';
import '../portal/portal-usage-charts.test.ts';
