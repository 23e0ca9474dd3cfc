import { html, type SafeHtml } from '../html.ts';
import { BASE } from '../paths.ts';

export interface PageContext {
  /** The CSRF token every form of the page carries. */
  csrf: string;
  /** The signed-in account's email, for the header; undefined when signed out. */
  signedInAs?: string;
}

/** The hidden field every form carries (http/csrf.ts checks it). */
export const csrfField = (page: PageContext) => html`<input type="hidden" name="_csrf" value="${page.csrf}">`;

/** A whole page: one stylesheet and one script, both served by the portal (no inline code: the CSP forbids it). */
export function layout(title: string, page: PageContext, body: SafeHtml): SafeHtml {
  const nav = page.signedInAs
    ? html`<nav aria-label="Account"><span>${page.signedInAs}</span>
        <form method="post" action="${BASE}/signout">${csrfField(page)}<button type="submit">Sign out</button></form></nav>`
    : html`<nav aria-label="Account"><a href="${BASE}/signin">Sign in</a> <a href="${BASE}/signup">Sign up</a></nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Animal Store developer portal</title>
<link rel="icon" href="${BASE}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${BASE}/assets/portal.css">
<script src="${BASE}/assets/copy.js" defer></script>
</head>
<body>
<header><a class="brand" href="${BASE}/">Animal Store API · developers</a><a href="${BASE}/reference">API reference</a>${nav}</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

/** A short notice line: an error (role=alert) or information. */
export const notice = (text: string | undefined, kind: 'error' | 'info' = 'error') =>
  text ? html`<p class="notice ${kind}"${kind === 'error' ? html` role="alert"` : ''}>${text}</p>` : '';
