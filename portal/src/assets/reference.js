/* global document, sessionStorage, SwaggerUIBundle */
// The API reference page: Swagger UI on the spec the portal serves, in a file of its own (the CSP
// allows no inline script). A key handed over by the key page (copy.js) is authorized at once.
const root = document.getElementById('swagger-ui');
const handedKey = document.getElementById('handed-key');
const storageName = root.dataset.handedKey;
const scheme = root.dataset.scheme;

const ui = SwaggerUIBundle({
  url: root.dataset.spec,
  domNode: root,
  // no calls to swagger.io's validator, no authorization kept in localStorage, no spec from the query
  validatorUrl: null,
  persistAuthorization: false,
  queryConfigEnabled: false,
  deepLinking: false,
  onComplete() {
    const key = sessionStorage.getItem(storageName);
    if (!key) return;
    ui.preauthorizeApiKey(scheme, key);
    handedKey.hidden = false;
  },
});

document.querySelector('[data-forget-key]')?.addEventListener('click', () => {
  sessionStorage.removeItem(storageName);
  ui.authActions.logout([scheme]);
  handedKey.hidden = true;
});
