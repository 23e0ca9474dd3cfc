-- kong/status/init.lua (3.9.3): the Status API app (status_listen, and the node's own
-- unix:<prefix>/status.sock). Its routes are Kong's /status (kong.api.routes.health) and
-- /status/ready (kong.status.ready), and those plugins add in kong.plugins.<name>.status_api
-- ({ [path] = { GET = function(self) ... end } }), e.g. prometheus's /metrics. As in Kong's
-- lapis app, a path also matches with or without a trailing slash. A POST, PUT or PATCH has its
-- body read as Kong's api_helpers do: JSON or a form, whose fields join the query's in `params`.
local cjson = require "cjson.safe"
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
local sub = string.sub
local find = string.find
local lower = string.lower
local get_method = ngx.req.get_method
local get_uri_args = ngx.req.get_uri_args
local get_post_args = ngx.req.get_post_args
local get_body_data = ngx.req.get_body_data
local read_body = ngx.req.read_body
local req_socket = ngx.req.socket

local NEEDS_BODY = { POST = true, PUT = true, PATCH = true }

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

-- kong/api/api_helpers.lua:241-272 (before_filter): a body is JSON, a form or multipart, or 415
local function body_accepted(content_type)
  if not content_type then
    local content_length = ngx.var.http_content_length
    if content_length == "0" then
      return true
    end
    if not content_length then
      local _, err = req_socket()
      if err == "no body" then
        return true
      end
    end
    return false
  end
  return sub(content_type, 1, 16) == "application/json"
      or sub(content_type, 1, 19) == "multipart/form-data"
      or sub(content_type, 1, 33) == "application/x-www-form-urlencoded"
end

-- lapis's params and json_params, and api_helpers.lua:306-326 (parse_params): the query's
-- arguments, then the body's fields over them. Returns params, or nil and Kong's 400 message.
local function request_params(method, content_type)
  local params = get_uri_args()
  if not (NEEDS_BODY[method] and content_type) then
    return params
  end
  content_type = lower(content_type)
  local fields
  if find(content_type, "application/json", 1, true) then
    read_body()
    fields = cjson.decode(get_body_data() or "")
    if type(fields) ~= "table" then
      return nil, "Cannot parse JSON body"
    end
  elseif find(content_type, "application/x-www-form-urlencode", 1, true) then
    read_body()
    fields = get_post_args()
  end
  for name, value in pairs(fields or {}) do
    params[name] = value
  end
  return params
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
  local method = get_method()
  local content_type = ngx.var.content_type
  if NEEDS_BODY[method] and not body_accepted(content_type) then
    return kong.response.exit(415)
  end
  local handler = methods[method]
  if not handler then
    return kong.response.exit(405, { message = "Method not allowed" })
  end
  local params, err = request_params(method, content_type)
  if not params then
    return kong.response.exit(400, { message = err })
  end
  return handler({ params = params })
end

return status
