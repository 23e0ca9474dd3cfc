/* global document, Element, navigator, sessionStorage */
// The key page's buttons, on every page: a file of its own, as the Content-Security-Policy allows no inline script.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute('data-copy'));
  const status = button.parentElement?.querySelector('.copied');
  if (!field) return;
  try {
    await navigator.clipboard.writeText(field.value);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    // no clipboard permission (an insecure origin, an old browser): select it for Ctrl-C
    field.select();
    if (status) status.textContent = 'Selected: press Ctrl-C (Cmd-C) to copy.';
  }
});

// "Use it in the API reference": the key goes to the reference in this tab's sessionStorage only
// (never a URL, never localStorage), and leaves it on sign-out or on any page seen signed out.
const HANDED_KEY = 'portal.reference.key';
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('[data-hand-key]') : null;
  const field = link && document.getElementById(link.getAttribute('data-hand-key'));
  if (field) sessionStorage.setItem(HANDED_KEY, field.value);
});
document.addEventListener('submit', (event) => {
  if (event.target instanceof Element && event.target.matches('form[action$="/signout"]')) sessionStorage.removeItem(HANDED_KEY);
});
if (!document.querySelector('form[action$="/signout"]')) sessionStorage.removeItem(HANDED_KEY);
