-- The `kong` global plugins see, assembled from the PDK modules as kong/pdk/init.lua does, and
-- the modules Kong lets plugins require (cjson, kong.meta, kong.db.schema.typedefs).
local config = require "pdk.config"
local json = require "cjson"
local routing = require "pdk.router"

local version = config.kong_version
local kong = {
  version = version,
  version_num = tonumber((version:gsub("(%d+)%.(%d+)%.(%d+)", function(a, b, c)
    return string.format("%d%02d%02d", a, b, c)
  end))),
  configuration = setmetatable({}, { __index = function() return nil end }),
  ctx = require "pdk.ctx",
  request = require "pdk.request",
  service = { request = require "pdk.service.request" },
  response = require "pdk.response",
  client = require "pdk.client",
  router = routing.router,
  node = routing.node,
  log = require "pdk.log",
  ip = {},
}

package.loaded["cjson.safe"] = json.safe
package.loaded["kong.meta"] = { version = version, _VERSION = version }

-- kong.db.schema.typedefs: the entries plugin schemas use for their top-level fields.
package.loaded["kong.db.schema.typedefs"] = {
  no_consumer = { type = "foreign", reference = "consumers", eq = json.null },
  no_route = { type = "foreign", reference = "routes", eq = json.null },
  no_service = { type = "foreign", reference = "services", eq = json.null },
  protocols_http = { type = "set", required = true, default = { "http", "https" },
                     elements = { type = "string", one_of = { "http", "https", "grpc", "grpcs", "ws", "wss" } } },
  protocols = { type = "set", required = true, default = { "grpc", "grpcs", "http", "https" },
                elements = { type = "string" } },
  header_name = { type = "string", match = "^[A-Za-z0-9_-]+$" },
}

return kong
