-- request-size-limiting with Kong 3.9's behaviour (kong/plugins/request-size-limiting/handler.lua):
-- a Content-Length is checked before anything is read; a body without one (chunked) is read,
-- in memory or, beyond client_body_buffer_size, in nginx's temporary file, and then checked.
local kong_meta = require "kong.meta"
local request_headers = require("kong.tools.request_headers").get


local kong = kong
local ngx = ngx
local type = type
local error = error
local tostring = tostring
local tonumber = tonumber
local io_open = io.open
local lower = string.lower
local match = string.match


local RequestSizeLimitingHandler = {
  PRIORITY = 951,
  VERSION = kong_meta.version,
}


local size_units = {
  "megabytes",
  "kilobytes",
  "bytes",
}
RequestSizeLimitingHandler.size_units = size_units


local unit_multiplication_factor = {
  ["bytes"]     = 1,
  ["kilobytes"] = 1024,    -- 2 ^ 10 bytes
  ["megabytes"] = 1048576, -- 2 ^ 20 bytes
}
RequestSizeLimitingHandler.unit_multiplication_factor = unit_multiplication_factor


local function strip(str)
  return match(str, "^%s*(.-)%s*$")
end


local function check_size(length, allowed_size, headers, unit)
  local allowed_bytes_size = allowed_size * unit_multiplication_factor[unit]
  if length > allowed_bytes_size then
    local expect = headers.expect
    if type(expect) == "string" and strip(lower(expect)) == "100-continue" then
      return kong.response.error(417, "Request size limit exceeded")
    end
    return kong.response.error(413, "Request size limit exceeded")
  end
end


local function file_size(path)
  local file, err = io_open(path, "rb")
  if not file then
    return nil, err
  end
  local size
  size, err = file:seek("end")
  file:close()
  return size, err
end


function RequestSizeLimitingHandler:access(conf)
  -- kong.request.get_headers(), shared (read only): kong.tools.request_headers
  local headers = request_headers(ngx.ctx)
  local cl = headers["content-length"]

  if cl and tonumber(cl) then
    return check_size(tonumber(cl), conf.allowed_payload_size, headers, conf.size_unit)
  end

  if conf.require_content_length and headers["Transfer-Encoding"] ~= "chunked" then
    return kong.response.error(411, "A valid Content-Length header is required")
  end

  -- kong.request.get_raw_body() reads the body; a body nginx buffered to a file is not returned.
  local data = kong.request.get_raw_body()
  if data then
    return check_size(#data, conf.allowed_payload_size, headers, conf.size_unit)
  end

  local body_filepath = ngx.req.get_body_file()
  if body_filepath then
    local size, err = file_size(body_filepath)
    if not size then
      return error("cannot read the size of the buffered request body: " .. tostring(err))
    end
    return check_size(size, conf.allowed_payload_size, headers, conf.size_unit)
  end

  kong.log.warn("missing request body")
end


return RequestSizeLimitingHandler
