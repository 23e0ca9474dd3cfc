-- RFC 4122 name-based UUIDs (version 5, SHA-1), as resty.jit-uuid's factory_v5 makes the ids
-- of split routes in kong/router/transform.lua.
local bit = require "bit"

local band, bor = bit.band, bit.bor
local byte, char, format = string.byte, string.char, string.format
local gsub, sub = string.gsub, string.sub
local sha1_bin = ngx.sha1_bin

local function to_bytes(uuid)
  local hex = gsub(uuid, "-", "")
  return (gsub(hex, "%x%x", function(pair) return char(tonumber(pair, 16)) end))
end

return function(namespace, name)
  local hash = sha1_bin(to_bytes(namespace) .. name)
  local b = { byte(hash, 1, 16) }
  b[7] = bor(band(b[7], 0x0F), 0x50)
  b[9] = bor(band(b[9], 0x3F), 0x80)
  local hex = format(("%02x"):rep(16), unpack(b))
  return sub(hex, 1, 8) .. "-" .. sub(hex, 9, 12) .. "-" .. sub(hex, 13, 16) .. "-" .. sub(hex, 17, 20) .. "-" .. sub(hex, 21, 32)
end
