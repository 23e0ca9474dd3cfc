-- The Kong PDK subset the local gateway offers custom plugins, written in Lua so that a plugin's
-- calls stay inside the VM. What lives in the gateway (request data, error templates, logging)
-- is reached through four JS functions; everything a phase changes is collected in Lua and
-- handed back as one string when the phase ends. Crossings per phase: one call in, one return,
-- plus one per first read of request data the plugin asks for. The phase's headers arrive as one
-- string ("blob": RS name FS value RS name FS value ... RS) that get_header searches in place, so
-- a plugin reading one header does not pay for turning every header into a table.
--
-- Host-provided globals: __js_req(what) -> string|nil, __js_error_body(status, message),
-- __js_set_body(body), __js_log(level, message). __kong_version, __shared_dicts set at startup.

local FS, RS = "\31", "\30"      -- field and record separators (control characters: never in headers)
local js_req, js_error_body, js_set_body, js_log = __js_req, __js_error_body, __js_set_body, __js_log

local json = require "cjson"

local lower = string.lower
local concat = table.concat
local find, sub, gmatch, gsub, format = string.find, string.sub, string.gmatch, string.gsub, string.format

local EXIT = setmetatable({}, { __tostring = function() return "kong.response.exit" end })

-- state of the phase being run -----------------------------------------------------------------
-- Tables are created on first use: most phases of most plugins touch few of them.
local now_ms = 0
local phase_name
local ops = {}                -- code, a, b, code, a, b, ... (reused; nops says how much is live)
local nops = 0
local req_state               -- per-request table: { plugin = {}, shared = {} }
local current_plugin
local cache                   -- per-phase cache of values read through js_req, or nil
local status_now, source_now  -- kong.response.get_status / get_source as the phase began
local req_blob, resp_blob     -- the headers as packed (or read), or nil until needed
local req_overlay             -- header name -> value | false (cleared) set during this phase, or nil
local resp_overlay
local req_added               -- header name -> { values added with add_header }, or nil
local resp_added
local status_override
local body_override

local function op(code, a, b)
  ops[nops + 1] = code
  ops[nops + 2] = a or ""
  ops[nops + 3] = b or ""
  nops = nops + 3
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
  if not cache then cache = {} end
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

-- Header values as kong/pdk/private/checks.lua (3.9.1) validates and normalizes them: a string,
-- number, boolean or array of strings; "" goes out as " " (nginx drops empty headers); numbers
-- as LuaJIT's tostring prints them ("%.14g"), not as this VM's Lua 5.4 would ("1.0").
local function scalar_header(value)
  local t = type(value)
  if t == "string" then return value == "" and " " or value end
  if t == "number" then return format("%.14g", value) end
  return value and "true" or "false"
end

-- Per-name work done once: plugins use the same few header names on every request. Bounded,
-- so that a plugin making names up (a header per request id, say) cannot grow it forever.
local MEMO_CAPACITY = 512
local function memo(compute)
  local size = 0
  return setmetatable({}, { __index = function(self, key)
    local value = compute(key)
    if size == MEMO_CAPACITY then
      for k in pairs(self) do rawset(self, k, nil) end
      size = 0
    end
    rawset(self, key, value)
    size = size + 1
    return value
  end })
end

-- Control characters (other than a tab in a value): Node's HTTP refuses to send them, so what
-- Kong (nginx) would do with them cannot be reproduced here; the call fails and says so rather
-- than send something else. It also keeps FS/RS, which frame the ops, out of header data.
-- Each check first asks whether the string is plain printable ASCII: anchored, that pattern is
-- about twice as fast as searching for the class it excludes, and it is almost always the answer.
local CONTROL_IN_NAME = { printable = "^[ -~]*$", control = "[\0-\31\127]" }
local CONTROL_IN_VALUE = { printable = "^[\t -~]*$", control = "[\0-\8\10-\31\127]" }
local name_is_clean = memo(function(name) return find(name, CONTROL_IN_NAME.control) == nil end)

local function refuse_control(name, s, check)
  if find(s, check.printable) then return end
  local at = find(s, check.control)
  if at then
    error(format("header %q: control character 0x%02X cannot be sent by the local gateway (Node's HTTP refuses it)",
      name, s:byte(at)), 5)
  end
end

-- kong/pdk/private/checks.lua's validate_header and validate_headers differ only in how the
-- scalar-type error words what was expected.
local EXPECTED_ONE = "array of string, string, number or boolean"
local EXPECTED_EACH = "string, number, boolean or array of strings"

--- Errors name the line that called the PDK function (two frames up from here).
local function check_header(name, value, expected)
  if type(name) ~= "string" then
    error(format("invalid header name %q: got %s, expected string", tostring(name), type(name)), 4)
  end
  if not name_is_clean[name] then refuse_control(name, name, CONTROL_IN_NAME) end
  local t = type(value)
  if t == "table" then
    for _, v in ipairs(value) do
      if type(v) ~= "string" then
        error(format("invalid header value in array %q: got %s, expected string", name, type(v)), 4)
      end
      refuse_control(name, v, CONTROL_IN_VALUE)
    end
  elseif t == "string" then
    refuse_control(name, value, CONTROL_IN_VALUE)
  elseif t ~= "number" and t ~= "boolean" then
    error(format("invalid header value for %q: got %s, expected %s", name, t, expected), 4)
  end
end

--- A checked value as it goes out: one string, or a list of strings for an array.
local function normalized_values(value)
  if type(value) ~= "table" then return scalar_header(value) end
  local list = {}
  for i, v in ipairs(value) do list[i] = v == "" and " " or v end
  return list
end

local function header_values(name, value)
  check_header(name, value, EXPECTED_ONE)
  return normalized_values(value)
end

--- set_headers and exit check every entry before changing anything.
local function check_headers(headers)
  if type(headers) ~= "table" then error("headers must be a table", 3) end
  for k, v in pairs(headers) do check_header(k, v, EXPECTED_EACH) end
end

-- Header names in lower case; as ngx looks them up (`_` as `-` too).
local lowered = memo(lower)
local normalized = memo(function(name) return (lower(name):gsub("_", "-")) end)

-- ngx.req.get_headers() tables answer any spelling.
local HEADERS_MT = { __index = function(self, k)
  if type(k) ~= "string" then return nil end
  return rawget(self, normalized[k])
end }

local NEEDLE = memo(function(key) return RS .. key .. FS end)

--- The first value of a header in a blob, found in place.
local function blob_first(blob, key)
  local _, e = find(blob, NEEDLE[key], 1, true)
  if not e then return nil end
  return sub(blob, e + 1, find(blob, RS, e + 1, true) - 1)
end

local function append_value(t, name, value)
  local existing = t[name]
  if existing == nil then
    t[name] = value
  elseif type(existing) == "table" then
    existing[#existing + 1] = value
  else
    t[name] = { existing, value }
  end
end

--- Every header of a blob, with this phase's changes applied, as ngx.req.get_headers() gives them.
local function headers_table(blob, overlay, added)
  local t = {}
  for name, value in gmatch(blob, "\30([^\31]*)\31([^\30]*)") do
    append_value(t, name, value)
  end
  for name, value in pairs(overlay or {}) do
    t[name] = value or nil
  end
  for name, values in pairs(added or {}) do
    for _, value in ipairs(values) do append_value(t, name, value) end
  end
  return setmetatable(t, HEADERS_MT)
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
-- All request (or response) headers come over in one crossing: packed into the phase call for
-- the phase that mostly reads them, else the first time a phase asks.
local function request_blob()
  if not req_blob then req_blob = read("headers") or RS end
  return req_blob
end

local function response_blob()
  if not resp_blob then resp_blob = read("resp_headers") or RS end
  return resp_blob
end

function kong.request.get_header(name)
  local key = normalized[name]
  if req_overlay then
    local v = req_overlay[key]
    if v ~= nil then return v or nil end
  end
  return blob_first(request_blob(), key)
end

function kong.request.get_headers()
  return headers_table(request_blob(), req_overlay, req_added)
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
-- What set/add/clear do to the headers a phase sees: a set or clear replaces every value, an
-- add appends one (and is the first value when there was none).
local function overlay_set(overlay, added, key, value)
  overlay = overlay or {}
  overlay[key] = value
  if added then added[key] = nil end
  return overlay
end

local function overlay_add(overlay, added, key, value, current_first)
  if current_first == nil then
    overlay = overlay or {}
    overlay[key] = value
    return overlay, added
  end
  added = added or {}
  local list = added[key]
  if list then list[#list + 1] = value else added[key] = { value } end
  return overlay, added
end

-- Setting a header to an array sends each value; to an empty array clears it (ngx.req.set_header
-- and ngx.header do both). Codes name the ops for one side: request or response.
local REQUEST_OPS = { set = "sh", add = "ah", clear = "ch" }
local RESPONSE_OPS = { set = "rsh", add = "rah", clear = "rch" }

local function apply_set(overlay, added, codes, name, values)
  local key = lowered[name]
  if type(values) == "string" then
    op(codes.set, name, values)
    return overlay_set(overlay, added, key, values), added
  end
  if values[1] == nil then
    op(codes.clear, name)
    return overlay_set(overlay, added, key, false), added
  end
  overlay = overlay_set(overlay, added, key, values[1])
  op(codes.set, name, values[1])
  for i = 2, #values do
    overlay, added = overlay_add(overlay, added, key, values[i], values[1])
    op(codes.add, name, values[i])
  end
  return overlay, added
end

local function apply_add(overlay, added, codes, name, values, current_first)
  local key = lowered[name]
  if type(values) == "string" then
    op(codes.add, name, values)
    return overlay_add(overlay, added, key, values, current_first)
  end
  for _, v in ipairs(values) do
    overlay, added = overlay_add(overlay, added, key, v, current_first)
    op(codes.add, name, v)
    current_first = current_first or v
  end
  return overlay, added
end

function kong.service.request.set_header(name, value)
  check_phase(REWRITE_ACCESS, "kong.service.request.set_header")
  local values = header_values(name, value)
  req_overlay, req_added = apply_set(req_overlay, req_added, REQUEST_OPS, name, values)
end

function kong.service.request.add_header(name, value)
  check_phase(REWRITE_ACCESS, "kong.service.request.add_header")
  local values = header_values(name, value)
  req_overlay, req_added = apply_add(req_overlay, req_added, REQUEST_OPS, name, values, kong.request.get_header(name))
end

function kong.service.request.clear_header(name)
  check_phase(REWRITE_ACCESS, "kong.service.request.clear_header")
  req_overlay = overlay_set(req_overlay, req_added, lowered[name], false)
  op("ch", name)
end

function kong.service.request.set_headers(headers)
  check_phase(REWRITE_ACCESS, "kong.service.request.set_headers")
  check_headers(headers)
  for name, value in pairs(headers) do
    req_overlay, req_added = apply_set(req_overlay, req_added, REQUEST_OPS, name, normalized_values(value))
  end
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

-- The same tables for the whole request, as ngx.ctx.authenticated_consumer/_credential are.
function kong.client.get_consumer()
  local f = req_state.consumer_fields
  if not f or f[1] == "" then return nil end
  local consumer = req_state.consumer
  if not consumer then
    consumer = { id = f[1], username = f[2] ~= "" and f[2] or nil, custom_id = f[3] ~= "" and f[3] or nil }
    req_state.consumer = consumer
  end
  return consumer
end

function kong.client.get_credential()
  local f = req_state.consumer_fields
  if not f or f[4] == "" then return nil end
  local credential = req_state.credential
  if not credential then
    credential = { id = f[4], consumer = { id = f[5] } }
    req_state.credential = credential
  end
  return credential
end

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
  return status_override or tonumber(status_now)
end

function kong.response.get_source()
  check_phase(HEADER_BODY_LOG, "kong.response.get_source")
  return source_now
end

function kong.response.get_header(name)
  local key = normalized[name]
  if resp_overlay then
    local v = resp_overlay[key]
    if v ~= nil then return v or nil end
  end
  return blob_first(response_blob(), key)
end

function kong.response.get_headers()
  return headers_table(response_blob(), resp_overlay, resp_added)
end

-- Kong leaves Transfer-Encoding to nginx (kong/pdk/response.lua).
local function is_transfer_encoding(name)
  local n = lowered[name]
  if n == "transfer-encoding" or n == "transfer_encoding" then
    kong.log.warn("manually setting Transfer-Encoding. Ignored.")
    return true
  end
  return false
end

function kong.response.set_header(name, value)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.set_header")
  local values = header_values(name, value)
  if is_transfer_encoding(name) then return end
  resp_overlay, resp_added = apply_set(resp_overlay, resp_added, RESPONSE_OPS, name, values)
end

function kong.response.add_header(name, value)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.add_header")
  local values = header_values(name, value)
  resp_overlay, resp_added = apply_add(resp_overlay, resp_added, RESPONSE_OPS, name, values, kong.response.get_header(name))
end

function kong.response.clear_header(name)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.clear_header")
  resp_overlay = overlay_set(resp_overlay, resp_added, lowered[name], false)
  op("rch", name)
end

function kong.response.set_headers(headers)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.set_headers")
  check_headers(headers)
  for name, value in pairs(headers) do
    if not is_transfer_encoding(name) then
      resp_overlay, resp_added = apply_set(resp_overlay, resp_added, RESPONSE_OPS, name, normalized_values(value))
    end
  end
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
      for _, v in ipairs(value) do op("xh", name, scalar_header(v)) end
    else
      op("xh", name, scalar_header(value))
    end
  end
  if content_type_and_body then js_set_body(content_type_and_body) end
  error(EXIT, 0)
end

function kong.response.exit(status, body, headers)
  check_phase(REWRITE_ACCESS_HEADER, "kong.response.exit")
  if type(status) ~= "number" then error("code must be a number", 2) end
  if status < 100 or status > 599 then error("code must be a number between 100 and 599", 2) end
  if body ~= nil and type(body) ~= "string" and type(body) ~= "table" then
    error("body must be a nil, string or table", 2)
  end
  if headers ~= nil and type(headers) ~= "table" then error("headers must be a nil or table", 2) end
  if headers ~= nil then check_headers(headers) end
  local encoded = body
  if type(body) == "table" then
    encoded = json.encode(body)
    headers = headers or {}
    local has_type = false
    for name in pairs(headers) do
      if lower(name) == "content-type" then has_type = true end
    end
    if not has_type then headers["Content-Type"] = "application/json; charset=utf-8" end
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
local configs = {}        -- config handle -> { name, handler, conf } of one plugin instance
local requests = {}       -- request slot -> per-request state

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

function __kong_set_config(handle, name, config_json)
  if name then
    configs[handle] = { name = name, handler = plugins[name], conf = json.decode(config_json) }
  else
    configs[handle] = nil
  end
end

local PHASES = { "rewrite", "access", "header_filter", "body_filter", "log" }
local SOURCES = { "service", "exit", "error" }
local tointeger = math.tointeger

--- Runs one phase of one plugin instance for one request and returns the ops it produced,
--- FS-separated code/a/b triples. The arguments (lua-phase-call.ts): the request's slot, the
--- instance's config handle, the phase (PHASES), now (ms), the status, the source (SOURCES),
--- 1 when no later phase call will come, the phase's headers as a blob (request headers for
--- rewrite/access, response headers for header_filter, else nil), and, when they changed since
--- the request's last phase call, the consumer's id, username, custom_id, the credential's id and
--- its consumer's id.
function __kong_phase(slot, config_handle, phase_code, now, status, source_code, done, headers, ...)
  local instance = configs[config_handle]
  local name = instance.name
  local phase = PHASES[phase_code]
  now_ms = now
  phase_name = phase
  current_plugin = name
  nops = 0
  cache = nil
  status_now, source_now = tointeger(status), SOURCES[source_code]
  req_blob, resp_blob = nil, nil
  if headers then
    if phase_code == 3 then resp_blob = headers else req_blob = headers end
  end
  req_overlay, resp_overlay, req_added, resp_added = nil, nil, nil, nil
  status_override = nil
  body_override = nil
  req_state = requests[slot]
  if not req_state then
    req_state = { plugin = {}, shared = {} }
    requests[slot] = req_state
  end
  if select("#", ...) > 0 then
    req_state.consumer_fields = { ... }
    req_state.consumer, req_state.credential = nil, nil
  end
  local plugin_state = req_state.plugin[name]
  if not plugin_state then
    plugin_state = {}
    req_state.plugin[name] = plugin_state
  end
  kong.ctx.plugin = plugin_state
  kong.ctx.shared = req_state.shared

  local handler = instance.handler
  local ok, err = pcall(handler[phase], handler, instance.conf)
  if not ok and err ~= EXIT then
    op("fail", (gsub(tostring(err), "[\30\31]", " ")))
  end
  if body_override then
    js_set_body(body_override)
    op("body")
  end
  if done == 1 then requests[slot] = nil end
  if nops == 0 then return "" end
  return concat(ops, FS, 1, nops)
end

function __kong_release(slot)
  requests[slot] = nil
end
