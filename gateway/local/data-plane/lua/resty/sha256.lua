-- resty.sha256, as OpenResty's lua-resty-string names it (Debian does not package it): SHA-256
-- through OpenSSL's libcrypto over LuaJIT's FFI. nginx is linked against libcrypto, so its
-- symbols are already in the process; outside nginx (the luajit command) the library is loaded.
--
--   local h = sha256:new()      -- nil, err when OpenSSL cannot initialise a context
--   h:update(s [, len])         -- true; len (0..#s): hash only the first len bytes of s
--   h:final()                   -- the 32-byte binary digest (resty.string's to_hex for hex)
--   h:reset()                   -- true: start over, the context reused
local ffi = require "ffi"

local ffi_new = ffi.new
local ffi_str = ffi.string
local setmetatable = setmetatable
local error = error

ffi.cdef [[
typedef struct SHA256state_st {
  unsigned int h[8];
  unsigned int Nl, Nh;
  unsigned int data[16];
  unsigned int num, md_len;
} SHA256_CTX;

int SHA256_Init(SHA256_CTX *c);
int SHA256_Update(SHA256_CTX *c, const void *data, size_t len);
int SHA256_Final(unsigned char *md, SHA256_CTX *c);
]]

local function crypto_library()
  local ok = pcall(function() return ffi.C.SHA256_Init end)
  if ok then
    return ffi.C
  end
  return ffi.load("libcrypto.so.3")
end

local C = crypto_library()

local DIGEST_LENGTH = 32
local ctx_type = ffi.typeof("SHA256_CTX[1]")
-- final() copies the digest out at once, and nothing yields in between: one buffer serves all.
local digest = ffi_new("unsigned char[?]", DIGEST_LENGTH)

local _M = { _VERSION = "0.1.0", DIGEST_LENGTH = DIGEST_LENGTH }
local mt = { __index = _M }

function _M.new(_)
  local ctx = ffi_new(ctx_type)
  if C.SHA256_Init(ctx) == 0 then
    return nil, "SHA256_Init failed"
  end
  return setmetatable({ _ctx = ctx }, mt)
end

function _M:update(s, len)
  if len and (len < 0 or len > #s) then
    -- lua-resty-string would read past the string's end
    error("len must be between 0 and #s", 2)
  end
  return C.SHA256_Update(self._ctx, s, len or #s) == 1
end

function _M:final()
  if C.SHA256_Final(digest, self._ctx) == 1 then
    -- not `return ffi_str(...)`: a tail call to a fast function ends the caller's trace
    local bin = ffi_str(digest, DIGEST_LENGTH)
    return bin
  end
  return nil
end

function _M:reset()
  return C.SHA256_Init(self._ctx) == 1
end

return _M
