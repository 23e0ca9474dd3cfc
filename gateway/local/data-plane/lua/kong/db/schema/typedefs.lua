--- kong.db.schema.typedefs for custom plugins' schema.lua files (kong/db/schema/typedefs.lua,
-- 3.9.3). The data plane only reads schemas to describe them to the control plane (describe
-- mode, plugins.json), which validates configurations in TypeScript: so these definitions are
-- data only. Where Kong's typedef has a custom_validator (a Lua function the control plane
-- cannot run), the definition carries `typedef = "<name>"` instead, naming the check the
-- control plane applies. Like Kong's, each typedef is callable to override fields:
-- typedefs.host { required = true }.
local null = ngx.null

local function define(tbl)
  return setmetatable(tbl, {
    __call = function(t, overrides)
      overrides = overrides or {}
      for k, v in pairs(t) do
        if overrides[k] == nil then
          overrides[k] = v
        end
      end
      return overrides
    end,
  })
end

local HTTP_PROTOCOLS = { "grpc", "grpcs", "http", "https" }
local PROTOCOLS = { "grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp" }

local typedefs = {}

typedefs.http_method = define { type = "string", match = "^%u+$" }
typedefs.protocol = define { type = "string", one_of = PROTOCOLS }
typedefs.host = define { type = "string", typedef = "host" }
typedefs.redis_host = define { type = "string", typedef = "host" }
typedefs.host_with_optional_port = define { type = "string", typedef = "host_with_optional_port" }
typedefs.wildcard_host = define { type = "string", typedef = "wildcard_host" }
typedefs.ip = define { type = "string", typedef = "ip" }
typedefs.ip_or_cidr = define { type = "string", typedef = "ip_or_cidr" }
typedefs.cidr_v4 = define { type = "string", typedef = "cidr_v4" }
typedefs.cidr = typedefs.cidr_v4
typedefs.port = define { type = "integer", between = { 0, 65535 } }
typedefs.path = define {
  type = "string",
  starts_with = "/",
  match_none = { { pattern = "//", err = "must not have empty segments" } },
  typedef = "path",
}
typedefs.url = define { type = "string", typedef = "url" }
typedefs.cookie_name = define { type = "string", typedef = "cookie_name" }
typedefs.header_name = define { type = "string", typedef = "header_name" }
typedefs.timeout = define { type = "integer", between = { 0, 2 ^ 31 - 2 } }
typedefs.uuid = define { type = "string", uuid = true, auto = true }
typedefs.auto_timestamp_s = define { type = "integer", timestamp = true, auto = true }
typedefs.auto_timestamp_ms = define { type = "number", timestamp = true, auto = true }
typedefs.no_route = define { type = "foreign", reference = "routes", eq = null }
typedefs.no_service = define { type = "foreign", reference = "services", eq = null }
typedefs.no_consumer = define { type = "foreign", reference = "consumers", eq = null }
typedefs.name = define { type = "string", unique = true, typedef = "name" }
typedefs.utf8_name = define { type = "string", unique = true, typedef = "utf8_name" }
typedefs.sni = define { type = "string", typedef = "sni" }
typedefs.tag = define { type = "string", required = true, typedef = "tag" }
typedefs.tags = define { type = "set", elements = typedefs.tag }
typedefs.protocols = define { type = "set", required = true, default = HTTP_PROTOCOLS, elements = typedefs.protocol }
typedefs.protocols_http = define {
  type = "set",
  required = true,
  default = HTTP_PROTOCOLS,
  elements = { type = "string", one_of = HTTP_PROTOCOLS },
}
typedefs.methods = define { type = "set", elements = typedefs.http_method }
typedefs.hosts = define { type = "array", elements = { type = "string", typedef = "wildcard_host" } }
typedefs.router_path = define { type = "string", typedef = "router_path" }
typedefs.router_paths = define { type = "array", elements = typedefs.router_path }
typedefs.headers = define {
  type = "map",
  keys = typedefs.header_name,
  values = { type = "array", elements = { type = "string" } },
}
typedefs.semantic_version = define { type = "string", typedef = "semantic_version" }
typedefs.ttl = define { type = "number", between = { 0, 100000000 } }

setmetatable(typedefs, {
  __index = function(_, k)
    error("schema typedef error: definition " .. tostring(k) .. " does not exist in the local gateway's typedefs", 2)
  end,
})

return typedefs
