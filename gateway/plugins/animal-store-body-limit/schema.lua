-- Configuration of animal-store-body-limit: request-size-limiting's (kong/plugins/
-- request-size-limiting/schema.lua), whose handler does the check.
local typedefs = require "kong.db.schema.typedefs"
local size_units = require("kong.plugins.request-size-limiting.handler").size_units

return {
  name = "animal-store-body-limit",
  fields = {
    { protocols = typedefs.protocols_http },
    { config = {
        type = "record",
        fields = {
          { allowed_payload_size = { type = "integer", default = 128 } },
          { size_unit = { type = "string", required = true, default = size_units[1], one_of = size_units } },
          { require_content_length = { type = "boolean", required = true, default = false } },
        },
    } },
  },
}
