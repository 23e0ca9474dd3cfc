-- kong/status/ready.lua (3.9.3): GET /status/ready. A data plane is ready once it runs a
-- configuration that is not the empty one, until POST /status/ready with status=draining
-- (`kong drain`) drains it: the flag is in the kong shared dict, so every worker of the node
-- answers 503 "draining" from then on, until the node restarts or reloads (Kong.init).
local clustering = require "kong.clustering"
local constants = require "kong.constants"

local kong = kong
local kong_shm = ngx.shared.kong

local KONG_STATUS_READY = constants.KONG_STATUS_READY_KEY

return {
  ["/status/ready"] = {
    GET = function()
      if kong_shm:get(KONG_STATUS_READY) == false then
        return kong.response.exit(503, { message = "draining" })
      end
      local rt = clustering.current()
      if rt and rt.hash ~= "" then
        return kong.response.exit(200, { message = "ready" })
      end
      return kong.response.exit(503, { message = "no configuration available (empty configuration present)" })
    end,

    POST = function(self)
      if self.params and self.params.status == "draining" then
        kong_shm:set(KONG_STATUS_READY, false)
        return kong.response.exit(204)
      end
      return kong.response.exit(400)
    end,
  },
}
