-- kong.response (kong/pdk/response.lua).
local bridge = require "pdk.bridge"
local headers = require "pdk.headers"
local json = require "cjson"
local log = require "pdk.log"
local phase = require "pdk.phase"

local FS, RS, OPS = bridge.FS, bridge.RS, bridge.OPS
local op, check, read = phase.op, phase.check, phase.read
local REWRITE_ACCESS_HEADER, HEADER_BODY_LOG, BODY = phase.REWRITE_ACCESS_HEADER, phase.HEADER_BODY_LOG, phase.BODY
local RESPONSE = headers.RESPONSE
local lower, format = string.lower, string.format
local js_error_body, js_set_body = __js_error_body, __js_set_body

local response = {}

local function blob()
  local b = phase.resp_blob
  if not b then
    b = read("resp_headers") or RS
    phase.resp_blob = b
  end
  return b
end

function response.get_status()
  return phase.status_override or phase.status
end

function response.get_source()
  check(HEADER_BODY_LOG, "kong.response.get_source")
  return phase.source
end

function response.get_header(name)
  return headers.first(blob(), phase.resp_overlay, name)
end

function response.get_headers()
  return headers.table(blob(), phase.resp_overlay, phase.resp_added)
end

-- Kong leaves Transfer-Encoding to nginx.
local function is_transfer_encoding(name)
  local n = headers.lowered[name]
  if n == "transfer-encoding" or n == "transfer_encoding" then
    log.warn("manually setting Transfer-Encoding. Ignored.")
    return true
  end
  return false
end

function response.set_header(name, value)
  check(REWRITE_ACCESS_HEADER, "kong.response.set_header")
  local values = headers.values(name, value)
  if is_transfer_encoding(name) then return end
  headers.set(RESPONSE, name, values)
end

function response.add_header(name, value)
  check(REWRITE_ACCESS_HEADER, "kong.response.add_header")
  local values = headers.values(name, value)
  headers.add(RESPONSE, name, values, response.get_header(name))
end

function response.clear_header(name)
  check(REWRITE_ACCESS_HEADER, "kong.response.clear_header")
  headers.clear(RESPONSE, name)
end

function response.set_headers(t)
  check(REWRITE_ACCESS_HEADER, "kong.response.set_headers")
  headers.check_all(t)
  for name, value in pairs(t) do
    if not is_transfer_encoding(name) then headers.set(RESPONSE, name, headers.normalized_values(value)) end
  end
end

function response.set_status(status)
  check(REWRITE_ACCESS_HEADER, "kong.response.set_status")
  phase.status_override = status
  op(OPS.set_status, format("%d", status))
end

local function has_content_type(t)
  for name in pairs(t) do
    if lower(name) == "content-type" then return true end
  end
  return false
end

local function push_exit(status, body, exit_headers)
  op(OPS.exit, format("%d", status))
  for name, value in pairs(exit_headers or {}) do
    if type(value) == "table" then
      for _, v in ipairs(value) do op(OPS.exit_header, name, headers.scalar(v)) end
    else
      op(OPS.exit_header, name, headers.scalar(value))
    end
  end
  if body then js_set_body(body) end
  error(phase.EXIT, 0)
end

function response.exit(status, body, exit_headers)
  check(REWRITE_ACCESS_HEADER, "kong.response.exit")
  if type(status) ~= "number" then error("code must be a number", 2) end
  if status < 100 or status > 599 then error("code must be a number between 100 and 599", 2) end
  if body ~= nil and type(body) ~= "string" and type(body) ~= "table" then
    error("body must be a nil, string or table", 2)
  end
  if exit_headers ~= nil and type(exit_headers) ~= "table" then error("headers must be a nil or table", 2) end
  if exit_headers ~= nil then headers.check_all(exit_headers) end
  if type(body) == "table" then
    body = json.encode(body)
    exit_headers = exit_headers or {}
    if not has_content_type(exit_headers) then exit_headers["Content-Type"] = "application/json; charset=utf-8" end
  end
  push_exit(status, body, exit_headers)
end

function response.error(status, message, exit_headers)
  check(REWRITE_ACCESS_HEADER, "kong.response.error")
  if type(message) == "table" then message = json.encode(message) end
  local rendered = js_error_body(status, message)
  local sep = rendered:find(FS, 1, true)
  exit_headers = exit_headers or {}
  if not has_content_type(exit_headers) then exit_headers["Content-Type"] = rendered:sub(1, sep - 1) end
  push_exit(status, rendered:sub(sep + 1), exit_headers)
end

function response.get_raw_body()
  check(BODY, "kong.response.get_raw_body")
  -- nil until the last chunk, as Kong buffers the chunks it swallows (kong/pdk/response.lua)
  return phase.body_override or read("body")
end

function response.set_raw_body(body)
  check(BODY, "kong.response.set_raw_body")
  if type(body) ~= "string" then error("body must be a string", 2) end
  phase.body_override = body
end

return response
