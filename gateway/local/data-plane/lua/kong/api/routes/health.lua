-- kong/api/routes/health.lua (3.9.3): GET /status on the Status API, as a data plane answers it:
-- the memory of each shared dict and worker VM, nginx's connection counters and the running
-- configuration's hash. A data plane has no database: Kong leaves `database` out.
local clustering = require "kong.clustering"
local bytes_to_str = require("kong.pdk.node").bytes_to_str

local kong = kong
local type = type
local pcall = pcall
local tonumber = tonumber
local rep = string.rep

local NO_HASH = rep("0", 32)

return {
  ["/status"] = {
    GET = function(self)
      local unit = self.params.unit
      if type(unit) ~= "string" then
        unit = "m"
      end
      local scale = tonumber(self.params.scale)
      local ok, err = pcall(bytes_to_str, 0, unit, scale)
      if not ok then
        return kong.response.exit(400, { message = err })
      end
      local hash = clustering.current_hash()
      return kong.response.exit(200, {
        memory = kong.node.get_memory_stats(unit, scale),
        server = kong.nginx.get_statistics(),
        configuration_hash = hash ~= "" and hash or NO_HASH,
      })
    end,
  },
}
