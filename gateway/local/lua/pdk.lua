-- The Kong PDK subset the local gateway offers custom plugins, written in Lua so that a plugin's
-- calls stay inside the VM. What lives in the gateway (request data, error templates, logging)
-- is reached through four JS functions; everything a phase changes is collected in Lua and
-- handed back as one string when the phase ends. Crossings per phase: one call in, one return,
-- plus one per first read of request data the plugin asks for.
--
-- Host-provided globals: __js_req(what) -> string|nil, __js_error_body(status, message),
-- __js_set_body(body), __js_log(level, message). __kong_version, __shared_dicts set at startup.

local FS, RS = "\31", "\30"      -- field and record separators of the ops string (never in headers)
local js_req, js_error_body, js_set_body, js_log = __js_req, __js_error_body, __js_set_body, __js_log

local json = require "cjson"

local lower = string.lower
local concat = table.concat

local EXIT = setmetatable({}, { __tostring = function() return "kong.response.exit" end })

-- state of the phase being run -----------------------------------------------------------------
local now_ms = 0
local phase_name
local ops                     -- list of op strings
local req_state               -- per-request table: { plugin = {}, shared = {} }
local current_plugin
local cache                   -- per-phase cache of values read through js_req
local req_overlay             -- header name -> value | false (cleared) set during this phase
local resp_overlay
local status_override
local body_override

local function op(code, a, b)
  if b then
    ops[#ops + 1] = code .. FS .. a .. FS .. b
  elseif a then
    ops[#ops + 1] = code .. FS .. a
  else
    ops[#ops + 1] = code
  end
end

local function split(s, sep)
  local out = {}
  if s == nil or s == "" then return out end
  local start = 1
  while true do
    local i = s:find(sep, start, true)
    if not i then
      out[#out + 1] = s:sub(start)
      return out
    end
    out[#out + 1] = s:sub(start, i - 1)
    start = i + 1
  end
end

local function read(what, arg)
  local key = arg and (what .. FS .. arg) or what
  local v = cache[key]
  if v == nil then
    v = js_req(what, arg)
    if v == nil then v = false end
    cache[key] = v
  end
  return v or nil
end

local function check_phase(allowed, fn_name)
  if not allowed[phase_name] then
    error(fn_name .. " is not available in the " .. tostring(phase_name) .. " phase", 3)
  end
end

local REWRITE_ACCESS = { rewrite = true, access = true }
local REWRITE_ACCESS_HEADER = { rewrite = true, access = true, header_filter = true }
local HEADER_BODY_LOG = { header_filter = true, body_filter = true, log = true }
local BODY = { body_filter = true }

local function to_header_value(value)
  local t = type(value)
  if t == "string" then return value end
  if t == "number" then
    if value % 1 == 0 then return string.format("%d", value) end
    return tostring(value)
  end
  if t == "boolean" then return value and "true" or "false" end
  error("invalid header value: expected a string, number or boolean, got " .. t, 3)
end

-- Header names as ngx looks them up: lower case, `_` as `-` (memoised: plugins ask for the
-- same few names on every request).
local normalized = setmetatable({}, { __mode = "k", __index = function(self, name)
  local n = lower(name):gsub("_", "-")
  rawset(self, name, n)
  return n
end })

-- ngx.req.get_headers() tables answer any spelling.
local HEADERS_MT = { __index = function(self, k)
  if type(k) ~= "string" then return nil end
  return rawget(self, normalized[k])
end }

local function headers_from(serialized)
  local t = {}
  local fields = split(serialized, FS)
  for i = 1, #fields - 1, 2 do
    local name, value = fields[i], fields[i + 1]
    local existing = t[name]
    if existing == nil then
      t[name] = value
    elseif type(existing) == "table" then
      existing[#existing + 1] = value
    else
      t[name] = { existing, value }
    end
  end
  return setmetatable(t, HEADERS_MT)
end

local function apply_overlay(t, overlay)
  for name, value in pairs(overlay) do
    rawset(t, name, value or nil)
  end
  return t
end

-- kong ----------------------------------------------------------------------------------------
kong = {
  version = __kong_version,
  version_num = tonumber((__kong_version:gsub("(%d+)%.(%d+)%.(%d+)", function(a, b, c)
    return string.format("%d%02d%02d", a, b, c)
  end))),
  configuration = setmetatable({}, { __index = function() return nil end }),
  ctx = {},
  request = {},
  service = { request = {} },
  response = {},
  client = {},
  router = {},
  node = {},
  log = {},
  ip = {},
}


-- kong.request
-- All request (or response) headers come over in one crossing, the first time a phase asks.
local function request_headers()
  local t = cache.req_headers
  if not t then
    t = headers_from(read("headers"))
    cache.req_headers = t
  end
  return t
end

local function response_headers()
  local t = cache.resp_headers
  if not t then
    t = headers_from(read("resp_headers"))
    cache.resp_headers = t
  end
  return t
end

local function first(v)
  if type(v) == "table" then return v[1] end
  return v
end

function kong.request.get_header(name)
  local key = normalized[name]
  local v = req_overlay[key]
  if v ~= nil then return v or nil end
  return first(rawget(request_headers(), key))
end

function kong.request.get_headers()
  local copy = {}
  for k, v in pairs(request_headers()) do copy[k] = v end
  return apply_overlay(setmetatable(copy, getmetatable(request_headers())), req_overlay)
end

function kong.request.get_method() return read("method") end
function kong.request.get_path() return read("path") end
function kong.request.get_scheme() return read("scheme") end
function kong.request.get_host() return read("host") end
function kong.request.get_port() return tonumber(read("port")) end
function kong.request.get_raw_query() return read("query") or "" end
function kong.request.get_forwarded_scheme() return read("scheme") end
function kong.request.get_forwarded_host() return read("host") end
function kong.request.get_forwarded_port() return tonumber(read("port")) end

function kong.request.get_query()
  local t = {}
  for _, part in ipairs(split(read("query") or "", "&")) do
    if part ~= "" then
      local k, v = part:match("^([^=]*)=(.*)$")
      if not k then k, v = part, true end
      k = k:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
      if type(v) == "string" then
        v = v:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
      end
      local existing = t[k]
      if existing == nil then t[k] = v
      elseif type(existing) == "table" then existing[#existing + 1] = v
      else t[k] = { existing, v } end
    end
  end
  return t
end

function kong.request.get_query_arg(name)
  local v = kong.request.get_query()[name]
  if type(v) == "table" then return v[1] end
  return v
end

-- kong.service.request: changes the request the service receives (and what kong.request sees)
function kong.service.request.set_header(name, value)
  check_phase(REWRITE_ACCESS, "kong.service.request.set_header")
  local v = to_header_value(value)
  req_overlay[lower(name)] = v
  op("sh", name, v)
end

function kong.service.request.add_header(name, value)
  check_phase(REWRITE_ACCESS, "kong.service.request.add_header")
  local v = to_header_value(value)
  req_overlay[lower(name)] = nil
  cache.req_headers = nil
  op("ah", name, v)
end

function kong.service.request.clear_header(name)
  check_phase(REWRITE_ACCESS, "kong.service.request.clear_header")
  req_overlay[lower(name)] = false
  op("ch", name)
end

function kong.service.request.set_headers(headers)
  for name, value in pairs(headers) do kong.service.request.set_header(name, value) end
end

function kong.service.request.set_path(path)
  check_phase(REWRITE_ACCESS, "kong.service.request.set_path")
  op("sp", path)
end

function kong.service.request.set_raw_query(query)
  check_phase(REWRITE_ACCESS, "kong.service.request.set_raw_query")
  cache["query"] = query
  op("sq", query)
end

function kong.service.request.clear_query_arg(name)
  check_phase(REWRITE_ACCESS, "kong.service.request.clear_query_arg")
  cache["query"] = nil
  op("cq", name)
end

-- kong.client
function kong.client.get_ip() return read("ip") end
function kong.client.get_forwarded_ip() return read("ip") end

function kong.client.get_consumer() return cache.consumer end
function kong.client.get_credential() return cache.credential end

-- kong.router
function kong.router.get_route()
  local s = read("route")
  if not s then return nil end
  local f = split(s, FS)
  return { id = f[1], name = f[2] ~= "" and f[2] or nil }
end

function kong.router.get_service()
  local s = read("service")
  if not s then return nil end
  local f = split(s, FS)
  return { id = f[1], name = f[2] ~= "" and f[2] or nil }
end

function kong.node.get_id() return read("node_id") end

-- kong.response
function kong.response.get_status()
  return status_override or tonumber(read("status"))
end

function kong.response.get_source()
  check_phase(HEADER_BODY_LOG, "kong.response.get_source")
  return read("source")
end

function kong.response.get_header(name)
  local key = normalized[name]
  local v = resp_overlay[key]
  if v ~= nil then return v or nil end
  return first(rawget(response_headers(), key))
end

function kong.response.get_headers()
  local copy = {}
  for k, v in pairs(response_headers()) do copy[k] = v end
  return apply_overlay(setmetatable(copy, getmetatable(response_headers())), resp_overlay)
end

function kong.response.set_header(name, value)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.set_header")
  local v = to_header_value(value)
  resp_overlay[lower(name)] = v
  op("rsh", name, v)
end

function kong.response.add_header(name, value)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.add_header")
  local v = to_header_value(value)
  resp_overlay[lower(name)] = nil
  cache.resp_headers = nil
  op("rah", name, v)
end

function kong.response.clear_header(name)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.clear_header")
  resp_overlay[lower(name)] = false
  op("rch", name)
end

function kong.response.set_headers(headers)
  for name, value in pairs(headers) do kong.response.set_header(name, value) end
end

function kong.response.set_status(status)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.set_status")
  status_override = status
  op("st", string.format("%d", status))
end

local function push_exit(status, content_type_and_body, headers)
  op("exit", string.format("%d", status))
  for name, value in pairs(headers or {}) do
    if type(value) == "table" then
      for _, v in ipairs(value) do op("xh", name, to_header_value(v)) end
    else
      op("xh", name, to_header_value(value))
    end
  end
  if content_type_and_body then js_set_body(content_type_and_body) end
  error(EXIT, 0)
end

function kong.response.exit(status, body, headers)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.exit")
  if type(status) ~= "number" then error("code must be a number", 2) end
  local encoded = body
  if type(body) == "table" then
    encoded = json.encode(body)
    headers = headers or {}
    local has_type = false
    for name in pairs(headers) do
      if lower(name) == "content-type" then has_type = true end
    end
    if not has_type then headers["Content-Type"] = "application/json; charset=utf-8" end
  elseif body ~= nil and type(body) ~= "string" then
    error("body must be a nil, string or table", 2)
  end
  push_exit(status, encoded, headers)
end

function kong.response.error(status, message, headers)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.error")
  if type(message) == "table" then message = json.encode(message) end
  local rendered = js_error_body(status, message)
  local sep = rendered:find(FS, 1, true)
  headers = headers or {}
  local has_type = false
  for name in pairs(headers) do
    if lower(name) == "content-type" then has_type = true end
  end
  if not has_type then headers["Content-Type"] = rendered:sub(1, sep - 1) end
  push_exit(status, rendered:sub(sep + 1), headers)
end

function kong.response.get_raw_body()
  check_phase(BODY, "kong.response.get_raw_body")
  if body_override then return body_override end
  return read("body") or ""
end

function kong.response.set_raw_body(body)
  check_phase(BODY, "kong.response.set_raw_body")
  if type(body) ~= "string" then error("body must be a string", 2) end
  body_override = body
end

-- kong.log
local function logger(level)
  return function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    js_log(level, current_plugin .. ": " .. concat(parts))
  end
end
kong.log.err = logger("err")
kong.log.warn = logger("warn")
kong.log.notice = logger("notice")
kong.log.info = logger("info")
kong.log.debug = logger("debug")
setmetatable(kong.log, { __call = function(_, ...) return kong.log.notice(...) end })
kong.log.set_serialize_value = function() end

-- ngx -----------------------------------------------------------------------------------------
local shared = {}

local SharedDict = {}
SharedDict.__index = SharedDict

local function live(self, key)
  local e = self.data[key]
  if e and e.exp and e.exp <= now_ms then
    self.data[key] = nil
    return nil
  end
  return e
end

function SharedDict:get(key)
  local e = live(self, key)
  if not e then return nil end
  return e.value, e.flags
end

function SharedDict:set(key, value, exptime, flags)
  if value == nil then
    self.data[key] = nil
  else
    self.data[key] = { value = value, flags = flags, exp = (exptime and exptime > 0) and (now_ms + exptime * 1000) or nil }
  end
  return true, nil, false
end
SharedDict.safe_set = SharedDict.set

function SharedDict:add(key, value, exptime, flags)
  if live(self, key) then return false, "exists", false end
  return self:set(key, value, exptime, flags)
end
SharedDict.safe_add = SharedDict.add

function SharedDict:replace(key, value, exptime, flags)
  if not live(self, key) then return false, "not found", false end
  return self:set(key, value, exptime, flags)
end

function SharedDict:incr(key, value, init, init_ttl)
  local e = live(self, key)
  if not e then
    if init == nil then return nil, "not found" end
    self:set(key, init + value, init_ttl)
    return init + value, nil, false
  end
  if type(e.value) ~= "number" then return nil, "not a number" end
  e.value = e.value + value
  return e.value, nil, false
end

function SharedDict:delete(key) self.data[key] = nil end

function SharedDict:ttl(key)
  local e = live(self, key)
  if not e then return nil, "not found" end
  if not e.exp then return 0 end
  return (e.exp - now_ms) / 1000
end

function SharedDict:expire(key, exptime)
  local e = live(self, key)
  if not e then return nil, "not found" end
  e.exp = (exptime and exptime > 0) and (now_ms + exptime * 1000) or nil
  return true
end

function SharedDict:flush_all() self.data = {} end

function SharedDict:flush_expired()
  local n = 0
  for k in pairs(self.data) do
    if not live(self, k) then n = n + 1 end
  end
  return n
end

function SharedDict:get_keys(max)
  local keys = {}
  for k in pairs(self.data) do
    if live(self, k) then
      keys[#keys + 1] = k
      if max and max > 0 and #keys >= max then break end
    end
  end
  return keys
end

for _, name in ipairs(__shared_dicts) do
  shared[name] = setmetatable({ data = {} }, SharedDict)
end

ngx = {
  null = json.null,
  shared = shared,
  now = function() return now_ms / 1000 end,
  time = function() return math.floor(now_ms / 1000) end,
  update_time = function() end,
  log = function(level, ...) kong.log.notice(...) end,
  STDERR = 0, EMERG = 1, ALERT = 2, CRIT = 3, ERR = 4, WARN = 5, NOTICE = 6, INFO = 7, DEBUG = 8,
  OK = 0, ERROR = -1, HTTP_OK = 200, HTTP_BAD_REQUEST = 400, HTTP_UNAUTHORIZED = 401,
  HTTP_FORBIDDEN = 403, HTTP_NOT_FOUND = 404, HTTP_TOO_MANY_REQUESTS = 429,
  HTTP_INTERNAL_SERVER_ERROR = 500, HTTP_SERVICE_UNAVAILABLE = 503,
}
setmetatable(ngx, { __index = function(_, k)
  error("ngx." .. tostring(k) .. " is not available in the local gateway; use the Kong PDK", 2)
end })

-- modules Kong provides to plugins -------------------------------------------------------------
package.loaded["cjson"] = json
package.loaded["cjson.safe"] = json.safe
package.loaded["kong.meta"] = { version = __kong_version, _VERSION = __kong_version }

-- kong.db.schema.typedefs: the entries plugin schemas use for their top-level fields.
local PROTOCOLS_HTTP = { "http", "https" }
package.loaded["kong.db.schema.typedefs"] = {
  no_consumer = { type = "foreign", reference = "consumers", eq = json.null },
  no_route = { type = "foreign", reference = "routes", eq = json.null },
  no_service = { type = "foreign", reference = "services", eq = json.null },
  protocols_http = { type = "set", required = true, default = PROTOCOLS_HTTP,
                     elements = { type = "string", one_of = { "http", "https", "grpc", "grpcs", "ws", "wss" } } },
  protocols = { type = "set", required = true, default = { "grpc", "grpcs", "http", "https" },
                elements = { type = "string" } },
  header_name = { type = "string", match = "^[A-Za-z0-9_-]+$" },
}

-- phase runner ----------------------------------------------------------------------------------
local plugins = {}        -- name -> handler table
local configs = {}        -- plugin id -> config table
local requests = {}       -- request id -> per-request state

function __kong_register(name, handler_source, schema_source)
  package.preload["kong.plugins." .. name .. ".schema"] = assert(load(schema_source, "@" .. name .. "/schema.lua"))
  package.preload["kong.plugins." .. name .. ".handler"] = assert(load(handler_source, "@" .. name .. "/handler.lua"))
  local schema = require("kong.plugins." .. name .. ".schema")
  local handler = require("kong.plugins." .. name .. ".handler")
  plugins[name] = handler
  local phases = {}
  for _, p in ipairs({ "init_worker", "rewrite", "access", "header_filter", "body_filter", "log" }) do
    if type(handler[p]) == "function" then phases[#phases + 1] = p end
  end
  return { schema = json.encode(schema), priority = handler.PRIORITY, version = handler.VERSION or "",
           phases = concat(phases, ",") }
end

function __kong_init_worker(name)
  local handler = plugins[name]
  if handler.init_worker then handler:init_worker() end
end

function __kong_set_config(id, config_json)
  configs[id] = config_json and json.decode(config_json) or nil
end

--- Runs one phase of one plugin for one request and returns the ops it produced. Everything
--- most plugins read arrives packed in the one argument (see lua-plugin-host.ts packPhase):
--- name, phase, config id, request id, now (ms), status, source, consumer id, username,
--- custom_id, credential id, credential's consumer id, done, then the phase's headers as
--- name/value pairs (request headers for rewrite/access, response headers for header_filter).
function __kong_phase(packed)
  local f = split(packed, FS)
  local name, phase, config_id, request_id = f[1], f[2], f[3], f[4]
  now_ms = tonumber(f[5])
  phase_name = phase
  current_plugin = name
  ops = {}
  cache = { status = f[6], source = f[7] }
  if f[8] ~= "" then cache.consumer = { id = f[8], username = f[9] ~= "" and f[9] or nil, custom_id = f[10] ~= "" and f[10] or nil } end
  if f[11] ~= "" then cache.credential = { id = f[11], consumer = { id = f[12] } } end
  if #f > 13 then
    local headers = {}
    for i = 14, #f - 1, 2 do
      local k, v = f[i], f[i + 1]
      local existing = headers[k]
      if existing == nil then headers[k] = v
      elseif type(existing) == "table" then existing[#existing + 1] = v
      else headers[k] = { existing, v } end
    end
    setmetatable(headers, HEADERS_MT)
    if phase == "header_filter" then cache.resp_headers = headers else cache.req_headers = headers end
  end
  req_overlay = {}
  resp_overlay = {}
  status_override = nil
  body_override = nil
  req_state = requests[request_id]
  if not req_state then
    req_state = { plugin = {}, shared = {} }
    requests[request_id] = req_state
  end
  local plugin_state = req_state.plugin[name]
  if not plugin_state then
    plugin_state = {}
    req_state.plugin[name] = plugin_state
  end
  kong.ctx.plugin = plugin_state
  kong.ctx.shared = req_state.shared

  local handler = plugins[name]
  local ok, err = pcall(handler[phase], handler, configs[config_id])
  if not ok and err ~= EXIT then
    op("fail", tostring(err))
  end
  if body_override then
    js_set_body(body_override)
    op("body")
  end
  if f[13] == "1" then requests[request_id] = nil end
  return concat(ops, RS)
end

function __kong_release(request_id)
  requests[request_id] = nil
end
