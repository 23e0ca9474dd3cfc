-- resty.sha256, as OpenResty's lua-resty-string names it (Debian does not package it): SHA-256
-- through OpenSSL's libcrypto over LuaJIT's FFI. nginx is linked against libcrypto, so its
-- symbols are already in the process; outside nginx (the luajit command) the library is loaded.
local ffi = require "ffi"

local ffi_new = ffi.new
local ffi_str = ffi.string
local setmetatable = setmetatable

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
local ctx_type = ffi.typeof("SHA256_CTX")
local digest_type = ffi.typeof("unsigned char[?]")

local _M = { _VERSION = "0.1.0", DIGEST_LENGTH = DIGEST_LENGTH }
local mt = { __index = _M }

--- A new hashing context, or nil and an error.
function _M.new(_)
  local ctx = ffi_new(ctx_type)
  if C.SHA256_Init(ctx) == 0 then
    return nil, "SHA256_Init failed"
  end
  return setmetatable({ _ctx = ctx }, mt)
end

function _M:update(s)
  return C.SHA256_Update(self._ctx, s, #s) == 1
end

--- The 32-byte binary digest of everything passed to update since new or reset.
function _M:final()
  local digest = ffi_new(digest_type, DIGEST_LENGTH)
  if C.SHA256_Final(digest, self._ctx) == 1 then
    return ffi_str(digest, DIGEST_LENGTH)
  end
  return nil
end

function _M:reset()
  return C.SHA256_Init(self._ctx) == 1
end

return _M
