-- kong/status/init.lua (3.9.3): the Status API app (status_listen, and the node's own
-- unix:<prefix>/status.sock). Its routes are Kong's /status (kong.api.routes.health) and
-- /status/ready (kong.status.ready), and those plugins add in kong.plugins.<name>.status_api
-- ({ [path] = { GET = function(self) ... end } }), e.g. prometheus's /metrics. As in Kong's
-- lapis app, a path also matches with or without a trailing slash.
local health = require "kong.api.routes.health"
local ready = require "kong.status.ready"

local kong = kong
local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local type = type
local pairs = pairs
local ipairs = ipairs
local pcall = pcall
local require = require
local tostring = tostring

local status = {}

local loaded_plugins = {}
-- path -> { [method] = handler }, built on the first request: plugins' status_api modules load
-- in the worker, as Kong's lapis app loads them on its first request
local routes

local function attach(target, module_routes)
  for path, methods in pairs(module_routes) do
    if type(methods) == "table" then
      target[path] = methods
    end
  end
end

local function build_routes()
  local built = {}
  attach(built, health)
  attach(built, ready)
  for _, plugin in ipairs(loaded_plugins) do
    local module = "kong.plugins." .. plugin.name .. ".status_api"
    local ok, plugin_routes = pcall(require, module)
    if not ok then
      if not tostring(plugin_routes):find("module '" .. module .. "' not found", 1, true) then
        log(ERR, "could not load ", module, ": ", plugin_routes)
      end
    elseif type(plugin_routes) == "table" then
      attach(built, plugin_routes)
    end
  end
  return built
end

local function find_route(path)
  local methods = routes[path]
  if methods then
    return methods
  end
  if path:sub(-1) == "/" then
    return routes[path:sub(1, -2)]
  end
  return routes[path .. "/"]
end

--- The plugins the node runs (Kong.init): those with a status_api module add its routes.
function status.init(plugins)
  loaded_plugins = plugins
  routes = nil
end

--- Answers the request (content_by_lua), with Kong's 404 and 405.
function status.serve()
  if not routes then
    routes = build_routes()
  end
  local methods = find_route(ngx.var.uri)
  if not methods then
    return kong.response.exit(404, { message = "Not found" })
  end
  local handler = methods[ngx.req.get_method()]
  if not handler then
    return kong.response.exit(405, { message = "Method not allowed" })
  end
  return handler({ params = ngx.req.get_uri_args() })
end

return status
