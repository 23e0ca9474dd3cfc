-- animal-store-access: our routes serve only our consumers. A consumer outside the allowed ACL
-- groups (Kong's `acls` credentials) is refused with 403, after rate-limiting.
--
-- Kong's ACL plugin does this check at PRIORITY 950, before rate-limiting (910): its 403 could
-- carry no X-RateLimit-* and would not count. This plugin reads the same groups through the ACL
-- plugin's own module, kong.plugins.acl.groups (bundled with Kong OSS, and with the local data
-- plane), at a PRIORITY below rate-limiting's. The edge plugin gives the 403 our Error shape.
--
-- Key-auth's anonymous consumer is a consumer like any other here: it carries our group in
-- kong.yml, and its own request-termination answers 401 (PRIORITY 2) after this check.
--
-- A request of more than 100 header fields whose key key-auth therefore did not read is 431.
--
-- Then the key's scopes (scopes.lua: the credential's `scope:` tags): a request its key's scopes
-- do not cover is refused 403, the scope it needed left in kong.ctx.shared for the edge plugin,
-- which answers `insufficient_scope` with RFC 6750's WWW-Authenticate.
local groups = require "kong.plugins.acl.groups"
local scopes = require "kong.plugins.animal-store-access.scopes"

local kong = kong
local get_current_consumer_id = groups.get_current_consumer_id
local get_consumer_groups = groups.get_consumer_groups
local consumer_in_groups = groups.consumer_in_groups
local scopes_of = scopes.of
local required_scope = scopes.required
local ALL_SCOPES = scopes.ALL

local Access = {
  PRIORITY = 905, -- below rate-limiting (910), above animal-store-body-limit (901)
  VERSION = "1.0.0",
}

function Access:access(conf)
  local consumer_id = get_current_consumer_id()
  if not consumer_id then
    -- no authentication plugin identified anyone (Kong's ACL answers the same)
    return kong.response.exit(401, { message = "Unauthorized" })
  end

  local consumer_groups, err = get_consumer_groups(consumer_id)
  if err then
    kong.log.err("could not read the consumer's ACL groups: ", err)
    return kong.response.exit(500, { message = "An unexpected error occurred" })
  end

  -- conf.allow is the same table for every request under one configuration: the groups
  -- module caches its answer by it, as Kong's ACL plugin does with its own list
  if not (consumer_groups and consumer_in_groups(conf.allow, consumer_groups)) then
    return kong.response.exit(403, { message = "You cannot consume this service" })
  end

  local credential = kong.client.get_credential()
  if not credential then
    -- key-auth reads a request's first 100 header fields (kong.request.get_headers()), and the
    -- edge plugin's key header comes after the client's: past 100 no key is ever read, so the
    -- answer says that rather than invalid_api_key. Decided here, before any response: a status
    -- changed in header_filter would make the PDK's ngx.exit(401) log an error.
    local _, truncated = kong.request.get_headers()
    if truncated then
      return kong.response.exit(431, { message = "Request header fields too large" })
    end
    return -- the anonymous consumer: its own 401 answers
  end
  local allowed = scopes_of(credential)
  if allowed == ALL_SCOPES then
    return
  end
  local needed = required_scope(kong.request.get_method(), kong.request.get_path())
  if needed and not allowed[needed] then
    kong.ctx.shared.animal_store_missing_scope = needed
    return kong.response.exit(403, { message = "The API key lacks the scope " .. needed })
  end
end

return Access
