-- Configuration of animal-store-access: the ACL groups whose consumers may use the routes it is on
-- (Kong's ACL plugin's `allow`, kong/plugins/acl/schema.lua). On services and routes only: a
-- consumer's own scope would make the check meaningless.
local typedefs = require "kong.db.schema.typedefs"

return {
  name = "animal-store-access",
  fields = {
    { consumer = typedefs.no_consumer },
    { protocols = typedefs.protocols_http },
    { config = {
        type = "record",
        fields = {
          { allow = { type = "array", required = true, len_min = 1, elements = { type = "string" } } },
        },
    } },
  },
}
