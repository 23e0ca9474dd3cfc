-- kong.tools.uuid, as Kong 3.9 has it: random (version 4) UUIDs. Kong draws them from a seeded
-- math.random (resty.jit-uuid); here the bytes come from OpenSSL's RAND_bytes, which nginx links,
-- so no worker shares another's sequence whatever the seeds.
local ffi = require "ffi"
local bit = require "bit"


local C = ffi.C
local fmt = string.format
local band = bit.band
local bor = bit.bor
local error = error
local pcall = pcall
local type = type


pcall(ffi.cdef, "int RAND_bytes(unsigned char *buf, int num);")


local function crypto_library()
  local ok = pcall(function() return C.RAND_bytes end)
  if ok then
    return C
  end
  return ffi.load("libcrypto.so.3")
end


local crypto = crypto_library()

-- 16 bytes per UUID, drawn 64 UUIDs at a time.
local BATCH = 64
local buf = ffi.new("unsigned char[?]", 16 * BATCH)
local used = BATCH


local function uuid()
  if used == BATCH then
    if crypto.RAND_bytes(buf, 16 * BATCH) ~= 1 then
      return error("RAND_bytes failed")
    end
    used = 0
  end

  local b = buf + used * 16
  used = used + 1
  return fmt("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5],
             bor(band(b[6], 0x0f), 0x40), b[7],
             bor(band(b[8], 0x3f), 0x80), b[9],
             b[10], b[11], b[12], b[13], b[14], b[15])
end


local UUID_PATTERN = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$"


local function is_valid_uuid(str)
  return type(str) == "string" and str:find(UUID_PATTERN) ~= nil
end


return {
  uuid = uuid,
  is_valid_uuid = is_valid_uuid,
}
