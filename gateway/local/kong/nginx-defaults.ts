/**
 * What nginx decides before Kong's Lua runs, with the values Kong 3.9.3 gives it.
 *
 * kong/templates/nginx_kong.lua (3.9.3) sets neither `large_client_header_buffers` nor
 * `client_header_buffer_size`, so nginx's defaults apply: `large_client_header_buffers 4 8k`.
 * A request line longer than one buffer is answered 414; a header line longer than one buffer,
 * or headers that do not fit in the four, 494 (which kong/error_handlers.lua turns into 400
 * "Request header or cookie too large"). kong/templates/kong_defaults.lua (3.9.3) sets
 * `nginx_http_client_max_body_size = 0`: no body limit in nginx itself (request-size-limiting is
 * the configuration that bounds bodies).
 */
export const LARGE_CLIENT_HEADER_BUFFER_SIZE = 8 * 1024;
export const LARGE_CLIENT_HEADER_BUFFERS = 4;
/** The whole head Node's parser may hold: the four large buffers. */
export const MAX_HEADER_SIZE = LARGE_CLIENT_HEADER_BUFFERS * LARGE_CLIENT_HEADER_BUFFER_SIZE;

/**
 * `error_page 400 404 405 408 411 412 413 414 417 /kong_error_handler; error_page 494 =494 …;
 * error_page 500 502 503 504 …` (nginx_kong.lua, 3.9.3): these statuses, when nginx itself
 * finalizes a request with them, get Kong's error template from Kong.handle_error.
 */
export const KONG_ERROR_PAGES: ReadonlySet<number> = new Set([400, 404, 405, 408, 411, 412, 413, 414, 417, 494, 500, 502, 503, 504]);

/** nginx's built-in pages (src/http/ngx_http_special_response.c) for the statuses it has one. */
const NGINX_PAGE_TITLES: Record<number, string> = {
  301: '301 Moved Permanently', 302: '302 Found', 303: '303 See Other', 307: '307 Temporary Redirect',
  308: '308 Permanent Redirect', 400: '400 Bad Request', 401: '401 Authorization Required',
  402: '402 Payment Required', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Not Allowed',
  406: '406 Not Acceptable', 408: '408 Request Time-out', 409: '409 Conflict', 410: '410 Gone',
  411: '411 Length Required', 412: '412 Precondition Failed', 413: '413 Request Entity Too Large',
  414: '414 Request-URI Too Large', 415: '415 Unsupported Media Type', 416: '416 Requested Range Not Satisfiable',
  421: '421 Misdirected Request', 429: '429 Too Many Requests', 500: '500 Internal Server Error',
  501: '501 Not Implemented', 502: '502 Bad Gateway', 503: '503 Service Temporarily Unavailable',
  504: '504 Gateway Time-out', 505: '505 HTTP Version Not Supported', 507: '507 Insufficient Storage',
};

/**
 * The body nginx sends when a request is finalized with `status` and no error_page applies
 * (`server_tokens off` in nginx_kong.lua: the tail names no version). undefined: no page, empty body.
 */
export function nginxSpecialPage(status: number): string | undefined {
  const title = NGINX_PAGE_TITLES[status];
  if (!title) return undefined;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n`;
}
