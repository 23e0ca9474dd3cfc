-- kong.tools.redis.schema (kong/tools/redis/schema.lua, 3.9.3): the `redis` record Kong's
-- rate-limiting and custom plugins share (host, port, timeout, username, password, database,
-- ssl, ssl_verify, server_name), so that a custom plugin's schema.lua can use
-- `{ redis = require("kong.tools.redis.schema").config_schema }` here as on Kong.
local typedefs = require "kong.db.schema.typedefs"

local DEFAULT_TIMEOUT = 2000

return {
  config_schema = {
    type = "record",
    description = "Redis configuration",
    fields = {
      { host = typedefs.host },
      { port = typedefs.port({ default = 6379 }) },
      { timeout = typedefs.timeout({ default = DEFAULT_TIMEOUT }) },
      { username = { type = "string", referenceable = true } },
      { password = { type = "string", encrypted = true, referenceable = true, len_min = 0 } },
      { database = { type = "integer", default = 0 } },
      { ssl = { type = "boolean", required = false, default = false } },
      { ssl_verify = { type = "boolean", required = false, default = false } },
      { server_name = typedefs.sni({ required = false }) },
    },
  },
}
