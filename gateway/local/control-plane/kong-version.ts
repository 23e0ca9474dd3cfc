/** The Kong release this local gateway reproduces. Behaviour is checked against its source. */
export const KONG_VERSION = '3.9.3';
/** Kong's `_SERVER_TOKENS` (kong/meta.lua): the Server and Via value. */
export const SERVER_TOKENS = `kong/${KONG_VERSION}`;
export const KONG_TAGLINE = 'Welcome to kong';
