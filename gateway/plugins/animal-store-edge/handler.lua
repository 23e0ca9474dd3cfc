-- animal-store-edge: what Kong's bundled plugins do not do for the Animal Store API.
--   access        https_only: plain HTTP refused 426 (or a GET redirected to https, for web
--                 pages: https_redirect_status_code), before the key is read;
--                 Authorization: Bearer <key> -> its SHA-256 in the key-auth header (nothing for
--                 a malformed ask_ key, refused before any hash or look-up); a banned key's 429,
--                 while the key still has a credential.
--   header_filter Strict-Transport-Security over TLS (https_only); X-RateLimit-* from rate-limiting's RateLimit-*; strikes (429s) towards a ban;
--                 Error-shaped gateway errors.
--   body_filter   the Error body for responses Kong itself produced.
-- Strikes and bans are kept by bans.lua, by digest: this node's shared dict, or Redis for every node.
-- Kong 3.9 PDK only: the same file runs on Kong and on the local data plane (ngx_lua).
local cjson = require "cjson.safe"
local api_key = require "kong.plugins.animal-store-edge.api_key"
local bans = require "kong.plugins.animal-store-edge.bans"
local metrics = require "kong.plugins.animal-store-edge.metrics"

local kong = kong
local ngx = ngx
local ceil = math.ceil
local fmt = string.format
local find = string.find
local tostring = tostring
local tonumber = tonumber
local classify = api_key.classify
local bearer_token = api_key.bearer_token
local digest_of = api_key.digest
local is_hashed = api_key.is_hashed
local MALFORMED = api_key.MALFORMED

local Edge = {
  PRIORITY = 1300, -- above key-auth (1250): the key must be in place before it runs
  VERSION = "1.1.0",
}

-- Error codes of Kong-produced responses, by status (documented in gateway/openapi.yaml).
local CODES = {
  [400] = { "bad_request", "The request is malformed." },
  [403] = { "forbidden", "This API key may not use the Animal Store API." },
  [404] = { "not_found", "No resource at this path." },
  [405] = { "method_not_allowed", "This method is not allowed here." },
  [408] = { "request_timeout", "The request took too long to arrive." },
  [413] = { "payload_too_large", "The request body is too large." },
  [414] = { "uri_too_long", "The request URI is too long." },
  -- request-size-limiting's answer to an oversized body announced with Expect: 100-continue
  [417] = { "payload_too_large", "The request body is too large; it was refused before it was sent." },
  [426] = { "https_required", "The Animal Store API is served over HTTPS only: send the request to https://." },
  -- a key key-auth could not read (animal-store-access)
  [431] = { "request_headers_too_large", "The request has more header fields than the gateway reads (100)." },
  [500] = { "internal_error", "An unexpected error occurred." },
  [502] = { "bad_gateway", "The service behind the gateway could not be reached." },
  [503] = { "service_unavailable", "The service is temporarily unavailable." },
  [504] = { "gateway_timeout", "The service did not answer in time." },
}

local function int(n)
  local text = fmt("%d", n) -- not `return fmt(...)`: see api_key.lua's bearer_by_pattern
  return text
end

-- Kong's own 426 for an https-only route (kong/runloop/handler.lua:1267-1270). HTTP/2 forbids
-- both (RFC 9113 8.2.2: the client takes the response as malformed, curl's PROTOCOL_ERROR), so an
-- HTTP/2 request (a trusted balancer's that says X-Forwarded-Proto: http) gets the 426 without them.
local UPGRADE_HEADERS = { ["Connection"] = "Upgrade", ["Upgrade"] = "TLS/1.2, HTTP/1.1" }

local function upgrade_headers()
  local version = kong.request.get_http_version()
  if version and version >= 2 then
    return nil
  end
  return UPGRADE_HEADERS
end
-- Two years, subdomains included, as hstspreload.org recommends (RFC 6797).
local HSTS = "max-age=63072000; includeSubDomains"

--- Whether the client's connection was TLS: this node's own, or a TLS-terminating balancer's
--- that says so in X-Forwarded-Proto, believed from trusted_ips only (the PDK checks that).
local function over_tls()
  return kong.request.get_forwarded_scheme() == "https"
end

-- key-auth's own credential loader (kong/plugins/key-auth/handler.lua load_credential) and cache
-- key: what this plugin caches under a key is what key-auth would, so key-auth's look-up of the
-- same key right after is a cache hit.
local function load_credential(key)
  local credential, err = kong.db.keyauth_credentials:select_by_key(key)
  if not credential then
    return nil, err
  end
  if credential.ttl == 0 then
    return nil
  end
  return credential, nil, credential.ttl
end

local CACHE_OPTS = { resurrect_ttl = 0.001 }

local function find_credential(key)
  local cache_key = kong.db.keyauth_credentials:cache_key(key)
  local credential, err, hit_level = kong.cache:get(cache_key, CACHE_OPTS, load_credential, key)
  if err then
    return nil, err
  end
  if hit_level == 4 then -- a stale value: key-auth treats it as no credential
    return nil
  end
  return credential
end

--- accept_plaintext_keys (a migration aid, until `consumers hash-keys` has run): the key key-auth
--- gets for a token. The digest when a credential holds it; the token itself when a credential
--- holds it in clear; else the digest (no credential either way). A hashed credential's stored
--- value sent as a token never matches: its own digest matches nothing, and the credential that
--- holds it as key is tagged hashed.
local function migration_key(token, digest)
  local credential, err = find_credential(digest)
  if err then
    return nil, err
  end
  if credential then
    return digest
  end
  credential, err = find_credential(token)
  if err then
    return nil, err
  end
  if credential and not is_hashed(credential) then
    return token
  end
  return digest
end

-- An error message to log, unless it quotes the token or its digest (a store's error may).
local function loggable(err, token, digest)
  err = tostring(err)
  if find(err, token, 1, true) or find(err, digest, 1, true) then
    return "(the error quotes the key: not logged)"
  end
  return err
end

--- The key key-auth gets for a token: its digest, or with accept_plaintext_keys migration_key's.
local function key_for(conf, token, digest)
  if conf.accept_plaintext_keys then
    return migration_key(token, digest)
  end
  return digest
end

local function lookup_failed(conf, err, token, digest)
  kong.service.request.clear_header(conf.key_header)
  kong.log.err("could not look up a key-auth credential: ", loggable(err, token, digest))
  return kong.response.exit(500, { message = "An unexpected error occurred" })
end

function Edge:init_worker()
  metrics.init()
end

local function access(conf)
  -- Refused before anything reads the key: no hash, no look-up, no ban check, no rate limit. The
  -- runloop's own 426 (route protocols https) cannot be used: it answers before any plugin of the
  -- route runs, so its body would not be in the Error shape (docs/https.md).
  if conf.https_only and not over_tls() then
    if kong.request.get_header("authorization") then
      kong.log.notice("plain HTTP refused (https_only); the request carried an Authorization header")
    end
    -- web pages (the portal): a browser's GET goes to the same page over https, as a route's
    -- https_redirect_status_code sends it (kong/runloop/handler.lua:1273-1279: the host, no port)
    local redirect = conf.https_redirect_status_code
    if redirect and redirect ~= 426 then
      local method = kong.request.get_method()
      if method == "GET" or method == "HEAD" then
        local location = "https://" .. kong.request.get_forwarded_host() .. kong.request.get_path_with_query()
        return kong.response.exit(redirect, nil, { ["Location"] = location })
      end
    end
    return kong.response.exit(426, nil, upgrade_headers())
  end

  local authorization = kong.request.get_header("authorization")
  local token = bearer_token(authorization)

  -- The key only ever arrives as a bearer token: key-auth's header carries its digest or nothing
  -- (whatever the client put there is dropped), and the backend never sees Authorization.
  kong.service.request.clear_header("authorization")

  local state = kong.ctx.plugin
  state.auth = token and "bearer" or (authorization and "malformed" or "missing")
  if not token then
    kong.service.request.clear_header(conf.key_header)
    return
  end

  -- A token claiming to be an ask_ key that is none (length, alphabet, checksum) is refused here,
  -- before any hash or look-up: key-auth gets no key, so the request goes on as one without a
  -- valid key (key-auth's anonymous consumer, or its 401), answered invalid_api_key as any other.
  if classify(token) == MALFORMED then
    kong.service.request.clear_header(conf.key_header)
    kong.log.notice("malformed API key refused before any look-up (ask_ prefix; length, alphabet or checksum wrong)")
    metrics.checksum_failure()
    return
  end

  local digest, err = digest_of(token)
  if not digest then
    kong.service.request.clear_header(conf.key_header)
    kong.log.err("could not hash an API key: ", err)
    return kong.response.exit(500, { message = "An unexpected error occurred" })
  end
  state.key_id = digest

  local ban = bans.check(conf, digest)
  local key, credential
  key, err = key_for(conf, token, digest)
  -- A ban holds while the key does: a key revoked, deleted with its consumer or expired since
  -- goes on to key-auth's 401 as an unknown one. Only a banned key pays this look-up, key-auth's
  -- own right after (then a cache hit). The ban is kept: with policy redis, this node's copy of it
  -- is what spares the key's later requests a round trip.
  if key and ban then
    credential, err = find_credential(key)
  end
  if err then
    return lookup_failed(conf, err, token, digest)
  end
  if credential then
    kong.service.request.clear_header(conf.key_header)
    state.banned = ban
    -- the ban remembers whose key it is: key-auth, which would say, runs after this check
    metrics.banned_request(ban.username)
    return kong.response.exit(429, nil, { ["Retry-After"] = int(ceil(ban.until_s - ngx.now())) })
  end

  kong.service.request.set_header(conf.key_header, key)
end

function Edge:access(conf)
  access(conf)
  -- rate-limiting's clock: its RateLimit-Reset counts from ngx.time() in its access (kong/plugins/
  -- rate-limiting/handler.lua:127,181), so X-RateLimit-Reset adds it to this time, not to the time
  -- the answer leaves (a slow upstream). Taken after this phase's own waits (the ban check's Redis
  -- round trip); in between run only the plugins of PRIORITY 1300 to 910 (kong.yml: key-auth).
  kong.ctx.plugin.counted_at = ngx.time()
end

--- Counts a 429 against the key (its digest; bans.lua): past the threshold the key is banned.
local function strike(conf, key_id, limit)
  local consumer = kong.client.get_consumer() or {}
  local credential = kong.client.get_credential() or {}
  bans.strike(conf, key_id, limit,
              { username = consumer.username, consumer_id = consumer.id, credential_id = credential.id },
              ngx.now())
end

local function error_for(conf, status, state)
  if status == 401 then
    if state.auth == "bearer" then
      return "invalid_api_key", "The API key is invalid, revoked or expired.",
             fmt('Bearer realm="%s", error="invalid_token", error_description="The API key is invalid, revoked or expired"', conf.realm)
    end
    return "missing_api_key", "An API key is required: send 'Authorization: Bearer <API_KEY>'.",
           fmt('Bearer realm="%s"', conf.realm)
  end
  if status == 403 then
    -- animal-store-access refused the key's scopes (RFC 6750 3.1)
    local scope = kong.ctx.shared.animal_store_missing_scope
    if scope then
      return "insufficient_scope", fmt("This API key lacks the scope %s.", scope),
             fmt('Bearer realm="%s", error="insufficient_scope", scope="%s"', conf.realm, scope)
    end
  end
  if status == 429 then
    local retry = kong.response.get_header("Retry-After")
    if state.banned then
      return "api_key_banned",
             fmt("This API key is temporarily banned after repeated rate-limit violations; retry after %s seconds.", retry)
    end
    return "rate_limit_exceeded", fmt("Rate limit exceeded; retry after %s seconds.", retry or "a few")
  end
  local known = CODES[status]
  if known then
    return known[1], known[2]
  end
  return "gateway_error", fmt("The gateway could not complete the request (HTTP %d).", status)
end

function Edge:header_filter(conf)
  local state = kong.ctx.plugin

  if conf.https_only and over_tls() then
    kong.response.set_header("Strict-Transport-Security", HSTS)
  end

  -- X-RateLimit-*: rate-limiting reports the most constraining window as RateLimit-*.
  local limit = tonumber(kong.response.get_header("RateLimit-Limit"))
  if limit then
    kong.response.set_header("X-RateLimit-Limit", int(limit))
    kong.response.set_header("X-RateLimit-Remaining", kong.response.get_header("RateLimit-Remaining"))
    local counted_at = state.counted_at or ngx.time()
    kong.response.set_header("X-RateLimit-Reset", int(counted_at + (tonumber(kong.response.get_header("RateLimit-Reset")) or 0)))
  elseif state.banned then
    kong.response.set_header("X-RateLimit-Limit", int(state.banned.limit))
    kong.response.set_header("X-RateLimit-Remaining", "0")
    kong.response.set_header("X-RateLimit-Reset", int(state.banned.until_s))
  end

  local status = kong.response.get_status()
  if status == 429 and state.key_id and not state.banned and kong.client.get_credential() then
    strike(conf, state.key_id, limit)
  end

  if status < 400 or kong.response.get_source() == "service" then
    return
  end
  local code, message, www_authenticate = error_for(conf, status, state)
  state.error_body = cjson.encode({ code = code, message = message, status = status })
  kong.response.set_header("Content-Type", "application/json; charset=utf-8")
  kong.response.clear_header("Content-Length")
  if www_authenticate then
    kong.response.set_header("WWW-Authenticate", www_authenticate)
  end
end

function Edge:body_filter(conf)
  local error_body = kong.ctx.plugin.error_body
  if not error_body then
    return
  end
  if kong.response.get_raw_body() then
    kong.response.set_raw_body(error_body)
  end
end

return Edge
