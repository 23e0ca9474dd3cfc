-- resty.string, as OpenResty's lua-resty-string names it (Debian does not package it): the
-- helpers plugins use with resty.sha256.
local ffi = require "ffi"

local ffi_new = ffi.new
local ffi_str = ffi.string
local byte = string.byte
local tonumber = tonumber

local _M = { _VERSION = "0.1.0" }

local HEX = "0123456789abcdef"
local hex_type = ffi.typeof("char[?]")

--- Lower-case hexadecimal of a binary string.
function _M.to_hex(s)
  local len = #s
  local out = ffi_new(hex_type, len * 2)
  for i = 1, len do
    local b = byte(s, i)
    local hi = (b - b % 16) / 16
    out[(i - 1) * 2] = byte(HEX, hi + 1)
    out[(i - 1) * 2 + 1] = byte(HEX, b % 16 + 1)
  end
  return ffi_str(out, len * 2)
end

--- A decimal string as a number (lua-resty-string's atoi), nil when it is not one.
function _M.atoi(s)
  return tonumber(s, 10)
end

return _M
