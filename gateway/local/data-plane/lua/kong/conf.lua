-- The node's settings: <prefix>/kong_conf.json, written by gateway/local/cmd (nginx passes no
-- environment to Lua), made into what Kong's conf_loader gives kong.configuration.
local cjson = require("cjson.safe").new()
local constants = require "kong.constants"

local lower = string.lower

local HEADERS = constants.HEADERS

-- kong/conf_loader/constants.lua HEADER_KEY_TO_NAME
local HEADER_KEY_TO_NAME = {
  server_tokens = "server_tokens",
  latency_tokens = "latency_tokens",
}
for _, name in ipairs({ HEADERS.VIA, HEADERS.SERVER, HEADERS.PROXY_LATENCY, HEADERS.RESPONSE_LATENCY,
                        HEADERS.ADMIN_LATENCY, HEADERS.UPSTREAM_LATENCY, HEADERS.UPSTREAM_STATUS,
                        HEADERS.REQUEST_ID }) do
  HEADER_KEY_TO_NAME[lower(name)] = name
end

local conf = {}

--- kong/conf_loader/init.lua: `headers` tokens to the set of enabled header names.
function conf.enabled_headers(tokens)
  local enabled = {}
  for _, name in pairs(HEADER_KEY_TO_NAME) do
    enabled[name] = false
  end
  if #tokens > 0 and tokens[1] ~= "off" then
    for _, token in ipairs(tokens) do
      local name = HEADER_KEY_TO_NAME[lower(token)]
      if name then
        enabled[name] = true
      end
    end
  end
  if enabled.server_tokens then
    enabled[HEADERS.VIA] = true
    enabled[HEADERS.SERVER] = true
  end
  if enabled.latency_tokens then
    enabled[HEADERS.PROXY_LATENCY] = true
    enabled[HEADERS.RESPONSE_LATENCY] = true
    enabled[HEADERS.ADMIN_LATENCY] = true
    enabled[HEADERS.UPSTREAM_LATENCY] = true
  end
  return enabled
end

local REQUIRED = { "node_id", "prefix", "cluster_control_plane", "plugins", "headers", "trusted_ips",
                   "real_ip_header", "real_ip_recursive", "test_clock", "log_level" }

--- Reads and checks <prefix>/kong_conf.json; errors (init fails) when it is not usable.
function conf.load(prefix)
  local path = prefix .. "kong_conf.json"
  local file, err = io.open(path, "r")
  if not file then
    error("cannot read " .. path .. ": " .. tostring(err))
  end
  local json = file:read("*a")
  file:close()

  local config
  config, err = cjson.decode(json)
  if type(config) ~= "table" then
    error(path .. " is not a JSON object: " .. tostring(err))
  end
  for _, key in ipairs(REQUIRED) do
    if config[key] == nil then
      error(path .. ": " .. key .. " is missing")
    end
  end
  if config.cluster_control_plane == cjson.null then
    config.cluster_control_plane = nil
  end

  config.loaded_plugins = {}
  for _, name in ipairs(config.plugins) do
    config.loaded_plugins[name] = true
  end
  config.enabled_headers = conf.enabled_headers(config.headers)
  config.role = "data_plane"
  config.database = "off"
  config.router_flavor = "traditional_compatible"
  config.upstream_keepalive_pool_size = 512
  config.upstream_keepalive_max_requests = 10000
  config.upstream_keepalive_idle_timeout = 60
  config.error_default_type = "text/plain"
  config.proxy_http_version = "1.1"
  return config
end

return conf
