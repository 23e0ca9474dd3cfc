-- kong.log (kong/pdk/log.lua, 3.9.3): error-log lines prefixed "[kong] file:line " (and the
-- plugin's "[name] " while its handlers run), at nginx's levels; kong.log.serialize for loggers.
local errlog = require "ngx.errlog"
local phase_checker = require "kong.pdk.private.phases"
local constants = require "kong.constants"
local request_id = require("kong.tools.request_id").get

local ngx = ngx
local raw_log = errlog.raw_log
local get_sys_filter_level = errlog.get_sys_filter_level
local getinfo = debug.getinfo
local select = select
local tostring = tostring
local concat = table.concat
local match = string.match
local find = string.find
local byte = string.byte
local type = type
local ipairs = ipairs
local tonumber = tonumber
local pairs = pairs

local LEVELS = {
  debug = ngx.DEBUG,
  info = ngx.INFO,
  notice = ngx.NOTICE,
  warn = ngx.WARN,
  err = ngx.ERR,
  crit = ngx.CRIT,
  alert = ngx.ALERT,
  emerg = ngx.EMERG,
}

local check_phase = phase_checker.check
local PHASES = phase_checker.phases
local TYPE_NAMES = constants.RESPONSE_SOURCE.NAMES

local sys_level
local parts = {}

local function message(...)
  local n = select("#", ...)
  for i = 1, n do
    parts[i] = tostring((select(i, ...)))
  end
  local msg = concat(parts, "", 1, n)
  for i = 1, n do
    parts[i] = nil
  end
  return msg
end

local function gen_log_func(level, prefix)
  return function(...)
    if not sys_level then
      sys_level = get_sys_filter_level()
    end
    if sys_level and level > sys_level then
      return
    end

    local info = getinfo(2, "Sl")
    local src = info and info.short_src or "?"
    src = match(src, "([^/]*)$") or src
    local line = info and info.currentline or "?"
    raw_log(level, "[kong] " .. src .. ":" .. line .. " " .. prefix .. message(...))
  end
end

local serialize

local MODES = { set = true, add = true, replace = true }

--- kong.log.set_serialize_value(key, value, options): a value for kong.log.serialize() to add
-- at `key` (dots make nested keys); options.mode "set" (default), "add" (only where nothing is)
-- or "replace" (only where something is).
local function set_serialize_value(key, value, options)
  check_phase(phase_checker.new(PHASES.rewrite, PHASES.access, PHASES.header_filter, PHASES.response,
                                PHASES.body_filter, PHASES.log))
  if type(key) ~= "string" then
    error("key must be a string", 2)
  end
  local mode = options and options.mode or "set"
  if not MODES[mode] then
    error("mode must be 'set', 'add' or 'replace'", 2)
  end
  local ctx = ngx.ctx
  local values = ctx.serialize_values
  if not values then
    values = {}
    ctx.serialize_values = values
  end
  values[#values + 1] = { key = key, value = value, mode = mode }
end

local function apply_serialize_values(root, values)
  for _, item in ipairs(values) do
    local node = root
    local parts = {}
    for part in item.key:gmatch("[^.]+") do
      parts[#parts + 1] = part
    end
    for i = 1, #parts - 1 do
      local next_node = node[parts[i]]
      if type(next_node) ~= "table" then
        next_node = {}
        node[parts[i]] = next_node
      end
      node = next_node
    end
    local last = parts[#parts]
    local exists = node[last] ~= nil
    if item.mode == "set" or (item.mode == "add" and not exists) or (item.mode == "replace" and exists) then
      node[last] = item.value
    end
  end
  return root
end

local function new_log(namespace)
  local self = {}
  local prefix = namespace and ("[" .. namespace .. "] ") or ""
  for name, level in pairs(LEVELS) do
    self[name] = gen_log_func(level, prefix)
  end
  self.deprecation = self.warn
  self.inspect = setmetatable({}, { __call = function() end })
  self.serialize = serialize
  self.set_serialize_value = set_serialize_value
  self.new = new_log
  return self
end

do
  local function headers_without(headers, secret)
    if headers[secret] then
      headers[secret] = "REDACTED"
    end
    return headers
  end

  --- A summary of the request for logging plugins (kong/pdk/log.lua serialize), log phase.
  serialize = function()
    check_phase(PHASES.log)
    local ctx = ngx.ctx
    local var = ngx.var
    local kong = kong

    local request_uri = var.request_uri or ""
    local q = find(request_uri, "?", 1, true)
    local host_port = ctx.host_port or tonumber(var.server_port)
    local upstream_uri = var.upstream_uri or ""
    if upstream_uri ~= "" and not find(upstream_uri, "?", 1, true) and byte(ctx.request_uri or request_uri, -1) == 63 then
      upstream_uri = upstream_uri .. "?"
    end

    local balancer_data = ctx.balancer_data
    local tries = balancer_data and balancer_data.tries or {}
    local authenticated = ctx.authenticated_credential

    local root = {
      request = {
        id = request_id(ctx),
        uri = request_uri,
        url = var.scheme .. "://" .. var.host .. ":" .. host_port .. request_uri,
        querystring = q and ngx.req.get_uri_args() or {},
        method = ngx.req.get_method(),
        headers = headers_without(ngx.req.get_headers(), "authorization"),
        size = tonumber(var.request_length),
      },
      upstream_uri = upstream_uri,
      upstream_status = var.upstream_status,
      response = {
        status = ngx.status,
        headers = ngx.resp.get_headers(),
        size = tonumber(var.bytes_sent),
      },
      tries = tries,
      latencies = {
        kong = (ctx.KONG_PROXY_LATENCY or ctx.KONG_RESPONSE_LATENCY or 0) + (ctx.KONG_RECEIVE_TIME or 0),
        proxy = ctx.KONG_WAITING_TIME or -1,
        request = tonumber(var.request_time) * 1000,
        receive = ctx.KONG_RECEIVE_TIME or 0,
      },
      authenticated_entity = authenticated and { id = authenticated.id, consumer_id = authenticated.consumer_id },
      route = ctx.route,
      service = ctx.service,
      consumer = ctx.authenticated_consumer,
      client_ip = var.remote_addr,
      started_at = ctx.KONG_PROCESSING_START or ngx.req.start_time() * 1000,
      source = TYPE_NAMES[kong.response.get_source()],
    }
    if ctx.serialize_values then
      apply_serialize_values(root, ctx.serialize_values)
    end
    return root
  end
end

return {
  new = function()
    return new_log(nil)
  end,
  namespaced = new_log,
}
