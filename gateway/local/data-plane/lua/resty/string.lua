-- resty.string, as OpenResty's lua-resty-string names it (Debian does not package it): the
-- helpers plugins use with resty.sha256.
local ffi = require "ffi"

local ffi_new = ffi.new
local ffi_str = ffi.string
local byte = string.byte
local tonumber = tonumber
local pcall = pcall

local _M = { _VERSION = "0.1.0" }

local HEX = "0123456789abcdef"
local hex_type = ffi.typeof("unsigned char[?]")

-- nginx's own hex dump (ngx_string.c), as lua-resty-string calls it: no loop in Lua, so a trace
-- that reaches to_hex (the edge plugin hashes a key per request) is not cut by an inner loop.
-- Outside nginx (the luajit command) the loop below does it.
pcall(ffi.cdef, "unsigned char *ngx_hex_dump(unsigned char *dst, const unsigned char *src, size_t len);")
local hex_dump = pcall(function() return ffi.C.ngx_hex_dump end) and ffi.C.ngx_hex_dump or nil

-- one buffer, grown when needed: nothing yields between filling it and copying it out
local buf, buf_size = nil, 0

local function buffer(size)
  if size > buf_size then
    buf_size = size
    buf = ffi_new(hex_type, size)
  end
  return buf
end

--- Lower-case hexadecimal of a binary string.
function _M.to_hex(s)
  local len = #s
  local out = buffer(len * 2)
  if hex_dump then
    hex_dump(out, s, len)
    -- not `return ffi_str(...)`: a tail call to a fast function ends the caller's trace
    -- ("leaving loop in root trace at ffi.string"; kong/globalpatches.lua's ngx.var has the same)
    local hex = ffi_str(out, len * 2)
    return hex
  end
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
