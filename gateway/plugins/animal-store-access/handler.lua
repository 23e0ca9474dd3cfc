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
local groups = require "kong.plugins.acl.groups"

local kong = kong
local get_current_consumer_id = groups.get_current_consumer_id
local get_consumer_groups = groups.get_consumer_groups
local consumer_in_groups = groups.consumer_in_groups

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
  if consumer_groups and consumer_in_groups(conf.allow, consumer_groups) then
    return
  end

  return kong.response.exit(403, { message = "You cannot consume this service" })
end

return Access
