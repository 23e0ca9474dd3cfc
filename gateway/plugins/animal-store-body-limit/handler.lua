-- animal-store-body-limit: request-size-limiting's check (413, 417 for Expect: 100-continue,
-- 411 when a Content-Length is required), run after rate-limiting.
--
-- Kong runs a request's plugins by PRIORITY, with no way to reorder them per configuration (OSS),
-- and request-size-limiting (951) comes before rate-limiting (910): its 413 would carry no
-- X-RateLimit-* and not count against the limit. This plugin is the same check at a PRIORITY
-- below rate-limiting's: it calls the bundled handler's access, which Kong ships as
-- kong.plugins.request-size-limiting.handler (and the local data plane provides under that name).
--
-- Key-auth's anonymous consumer is not checked: a request without a valid key is answered 401 by
-- that consumer's request-termination (PRIORITY 2, kong.yml), whatever its body (the spec's
-- Authentication 4), and nothing reads the body it is refused with.
local size_limiting = require "kong.plugins.request-size-limiting.handler"

local kong = kong

local BodyLimit = {
  PRIORITY = 901, -- below rate-limiting (910), above response-ratelimiting (900)
  VERSION = "1.0.0",
}

function BodyLimit:access(conf)
  -- the anonymous consumer as Kong tells it: authenticated without a credential
  -- (kong/plugins/key-auth/handler.lua:217-227, set_consumer(consumer) with no credential)
  if kong.client.get_consumer() and not kong.client.get_credential() then
    return
  end
  return size_limiting:access(conf)
end

return BodyLimit
