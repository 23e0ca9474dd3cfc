-- Header handling shared by kong.request, kong.service.request and kong.response: the checks of
-- kong/pdk/private/checks.lua (3.9.1), the header blob the host packs, and the overlay that lets a
-- phase see its own changes. A blob is RS name FS value RS name FS value ... RS (names lower case);
-- get_header searches it in place, so reading one header does not build a table of all of them.
local bridge = require "pdk.bridge"
local phase = require "pdk.phase"

local FS, RS = bridge.FS, bridge.RS
local lower, find, sub, gmatch, format = string.lower, string.find, string.sub, string.gmatch, string.format
local op = phase.op

local headers = {}

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

-- Header names in lower case; as ngx looks them up (`_` as `-` too).
headers.lowered = memo(lower)
headers.normalized = memo(function(name) return (lower(name):gsub("_", "-")) end)
local lowered, normalized = headers.lowered, headers.normalized

-- Header values as checks.lua validates and normalizes them: a string, number, boolean or array
-- of strings; "" goes out as " " (nginx drops empty headers); numbers as LuaJIT's tostring
-- prints them ("%.14g"), the same on Lua 5.4 (which would print "1.0").
function headers.scalar(value)
  local t = type(value)
  if t == "string" then return value == "" and " " or value end
  if t == "number" then return format("%.14g", value) end
  return value and "true" or "false"
end
local scalar = headers.scalar

-- Control characters (other than a tab in a value): Node's HTTP refuses to send them, so what
-- Kong (nginx) would do with them cannot be reproduced here; the call fails and says so rather
-- than send something else. It also keeps FS/RS, which frame the ops, out of header data.
-- (%z, not \0: Lua 5.1 patterns cannot hold a zero byte.)
local CONTROL_IN_NAME = "[%z\1-\31\127]"
local CONTROL_IN_VALUE = "[%z\1-\8\10-\31\127]"

-- The usual answer is "no control character at all", asked for every name and value set. LuaJIT
-- compiles a byte loop (a pattern search would leave the trace); Lua 5.4 interprets the loop,
-- and there one anchored pattern search is the faster way to ask.
local all_printable
if jit then
  local byte = string.byte
  all_printable = function(s)
    for i = 1, #s do
      local c = byte(s, i)
      if c < 32 or c == 127 then return false end
    end
    return true
  end
else
  all_printable = function(s) return find(s, "^[ -~]*$") ~= nil end
end

local function refuse_control(name, s, control)
  if all_printable(s) then return end
  local at = find(s, control)
  if at then
    error(format("header %q: control character 0x%02X cannot be sent by the local gateway (Node's HTTP refuses it)",
      name, s:byte(at)), 5)
  end
end

-- checks.lua's validate_header and validate_headers differ only in how the scalar-type error
-- words what was expected.
local EXPECTED_ONE = "array of string, string, number or boolean"
local EXPECTED_EACH = "string, number, boolean or array of strings"

--- Errors name the line that called the PDK function (two frames up from here).
local function check_header(name, value, expected)
  if type(name) ~= "string" then
    error(format("invalid header name %q: got %s, expected string", tostring(name), type(name)), 4)
  end
  refuse_control(name, name, CONTROL_IN_NAME)
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
function headers.normalized_values(value)
  if type(value) ~= "table" then return scalar(value) end
  local list = {}
  for i, v in ipairs(value) do list[i] = v == "" and " " or v end
  return list
end
local normalized_values = headers.normalized_values

--- One header's value, checked (set_header, add_header).
function headers.values(name, value)
  check_header(name, value, EXPECTED_ONE)
  return normalized_values(value)
end

--- set_headers and exit check every entry before changing anything.
function headers.check_all(t)
  if type(t) ~= "table" then error("headers must be a table", 3) end
  for k, v in pairs(t) do check_header(k, v, EXPECTED_EACH) end
end

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

local PAIR = RS .. "([^" .. FS .. "]*)" .. FS .. "([^" .. RS .. "]*)"

--- Every header of a blob, with this phase's changes applied, as ngx.req.get_headers() gives them.
function headers.table(blob, overlay, added)
  local t = {}
  for name, value in gmatch(blob, PAIR) do
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

--- A header's first value as the phase sees it: its own changes first, then the blob.
function headers.first(blob, overlay, name)
  local key = normalized[name]
  if overlay then
    local v = overlay[key]
    if v ~= nil then return v or nil end
  end
  return blob_first(blob, key)
end

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

-- One side's changes: the request the service receives, or the response the client receives.
-- Each side keeps its overlay in the phase state under its own fields, and has its own ops.
local OPS = bridge.OPS
headers.REQUEST = { overlay = "req_overlay", added = "req_added",
                    set = OPS.set_service_header, add = OPS.add_service_header, clear = OPS.clear_service_header }
headers.RESPONSE = { overlay = "resp_overlay", added = "resp_added",
                     set = OPS.set_response_header, add = OPS.add_response_header, clear = OPS.clear_response_header }

-- Setting a header to an array sends each value; to an empty array clears it (ngx.req.set_header
-- and ngx.header do both).
function headers.set(side, name, values)
  local key = lowered[name]
  local overlay, added = phase[side.overlay], phase[side.added]
  if type(values) == "string" then
    op(side.set, name, values)
    phase[side.overlay] = overlay_set(overlay, added, key, values)
    return
  end
  if values[1] == nil then
    op(side.clear, name)
    phase[side.overlay] = overlay_set(overlay, added, key, false)
    return
  end
  overlay = overlay_set(overlay, added, key, values[1])
  op(side.set, name, values[1])
  for i = 2, #values do
    overlay, added = overlay_add(overlay, added, key, values[i], values[1])
    op(side.add, name, values[i])
  end
  phase[side.overlay], phase[side.added] = overlay, added
end

function headers.add(side, name, values, current_first)
  local key = lowered[name]
  local overlay, added = phase[side.overlay], phase[side.added]
  if type(values) == "string" then
    op(side.add, name, values)
    phase[side.overlay], phase[side.added] = overlay_add(overlay, added, key, values, current_first)
    return
  end
  for _, v in ipairs(values) do
    overlay, added = overlay_add(overlay, added, key, v, current_first)
    op(side.add, name, v)
    current_first = current_first or v
  end
  phase[side.overlay], phase[side.added] = overlay, added
end

function headers.clear(side, name)
  phase[side.overlay] = overlay_set(phase[side.overlay], phase[side.added], lowered[name], false)
  op(side.clear, name)
end

return headers
