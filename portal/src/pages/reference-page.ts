import { html } from '../html.ts';
import { BASE } from '../paths.ts';
import { SWAGGER_UI_PATH } from '../http/vendor-assets.ts';
import { layout, type PageContext } from './layout.ts';

/** Where a key handed over by the key page waits for the reference, in this tab only (assets/copy.js, assets/reference.js). */
const HANDED_KEY = 'portal.reference.key';

/**
 * The API reference: gateway/openapi.yaml rendered by Swagger UI (swagger-ui-dist, served by the
 * portal) into #swagger-ui by assets/reference.js. Readable signed out; "try it" needs a key, pasted
 * in Authorize or handed over from the page that shows a new key.
 */
export function referencePage(page: PageContext, apiUrl: string, bearerScheme: string) {
  const howToAuthorize = page.signedInAs
    ? html`Keys are shown only once, so the portal cannot fill yours in: paste one in <strong>Authorize</strong>, or, right after a key is shown (a new, rotated or created key), press <strong>Use it in the API reference</strong> beside it.`
    : html`<a href="${BASE}/signin">Sign in</a> or <a href="${BASE}/signup">sign up</a> for a key, then paste it in <strong>Authorize</strong>.`;
  return layout(
    'API reference',
    page,
    html`<link rel="stylesheet" href="${BASE}${SWAGGER_UI_PATH}/swagger-ui.css">
<div class="reference-intro">
<p>Every endpoint of the Animal Store API. <strong>Try it out</strong> sends real requests to <code>${apiUrl}</code>
through the gateway, with your key: they count against your plan's limits like any other call.</p>
<p>${howToAuthorize}</p>
<p class="notice info" id="handed-key" hidden>The key handed over from your key page is authorized in this tab until you sign out.
<button type="button" data-forget-key>Forget it now</button></p>
<p>The description itself: <a href="${BASE}/reference/openapi.json">openapi.json</a>, <a href="${BASE}/reference/openapi.yaml">openapi.yaml</a>.</p>
</div>
<div id="swagger-ui" data-spec="${BASE}/reference/openapi.json" data-scheme="${bearerScheme}" data-handed-key="${HANDED_KEY}"></div>
<noscript><p>The interactive reference needs JavaScript; the description above is readable without it.</p></noscript>
<script src="${BASE}${SWAGGER_UI_PATH}/swagger-ui-bundle.js" defer></script>
<script src="${BASE}/assets/reference.js" defer></script>`,
  );
}
