-- kong/plugins/prometheus/status_api.lua (3.9.3): GET /metrics on the Status API.
local exporter = require "kong.plugins.prometheus.exporter"

return {
  ["/metrics"] = {
    GET = function()
      exporter.collect()
    end,
  },
}
