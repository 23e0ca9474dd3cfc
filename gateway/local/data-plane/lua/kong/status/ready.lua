-- kong/status/ready.lua (3.9.3): GET /status/ready. A data plane is ready once it runs a
-- configuration that is not the empty one.
local clustering = require "kong.clustering"

local kong = kong

return {
  ["/status/ready"] = {
    GET = function()
      local rt = clustering.current()
      if rt and rt.hash ~= "" then
        return kong.response.exit(200, { message = "ready" })
      end
      return kong.response.exit(503, { message = "no configuration available (empty configuration present)" })
    end,
  },
}
