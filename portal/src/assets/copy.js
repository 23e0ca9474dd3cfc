/* global document, Element, navigator */
// The copy button of the key page: a file of its own, as the Content-Security-Policy allows no inline script.
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
