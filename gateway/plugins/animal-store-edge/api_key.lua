-- API keys as the edge plugin sees them (docs/api-keys.md, "Format, storage, migration"; the CLI's
-- side is packages/provisioning/api-keys.ts, test vectors in test/fixtures/api-key-vectors.json):
--
--   ask_ <43 random> <6 checksum>   53 characters, base64url (A-Z a-z 0-9 - _) after the prefix
--
-- The checksum is the CRC-32 of the 47 characters before it, 4 bytes big-endian, base64url without
-- padding. ngx.crc32_long is in lua-resty-core 0.1.25 (ngx_lua 0.10.23) and in Kong 3.9's
-- OpenResty 1.25.3 alike; resty.sha256 and resty.string are OpenResty's lua-resty-string on Kong,
-- the data plane's own modules of the same names locally.
local ffi = require "ffi"
local sha256 = require "resty.sha256"
local to_hex = require("resty.string").to_hex
local bit = require "bit"

local ngx = ngx
local type = type
local pcall = pcall
local byte = string.byte
local sub = string.sub
local find = string.find
local band = bit.band
local rshift = bit.rshift
local lshift = bit.lshift

-- crc32_prefix(s, len): the CRC-32 of s's first len bytes. Inside nginx (Kong, the data plane),
-- ngx.crc32_long's own C function (lua-resty-core's resty.core.hash declares it) reads them where
-- they are: ngx.crc32_long would need them as a string of their own, garbage on every request.
-- Elsewhere (the unit cases under the luajit command) ngx.crc32_long of that string.
local crc32_prefix
if pcall(require, "resty.core.hash") then
  crc32_prefix = ffi.C.ngx_http_lua_ffi_crc32_long
else
  local crc32_long = ngx.crc32_long
  crc32_prefix = function(s, len)
    return crc32_long(sub(s, 1, len))
  end
end

local KEY_LENGTH = 53
local LEGACY_LENGTH = 47 -- ask_ + 43: keys issued before the checksum
local BODY_LENGTH = 47   -- what the checksum covers: everything before it

-- BASE64URL[byte]: whether it is a base64url character; DIGIT[0..63]: the character's byte
local BASE64URL, DIGIT = {}, {}
do
  local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  for i = 1, #alphabet do
    BASE64URL[byte(alphabet, i)] = true
    DIGIT[i - 1] = byte(alphabet, i)
  end
end

local A, S, K, UNDERSCORE = byte("a"), byte("s"), byte("k"), byte("_")

local api_key = {
  CHECKSUMMED = "checksummed", -- hash, look up
  LEGACY = "legacy",           -- hash, look up
  MALFORMED = "malformed",     -- refused before any hash or look-up
  UNPREFIXED = "unprefixed",   -- not an ask_ key (one an admin made by hand): hash, look up
  -- the tag on a credential whose key is the digest of the API key (kept in sync with the CLI's)
  HASHED_TAG = "key-hash:sha256",
}

-- The CRC's 32 bits, big-endian, in base64url without padding are six characters of 6 bits each,
-- the last one's low four bits zero: compared byte by byte, no string is made for them (this runs
-- on every request with a key).
local function checksum_matches(token)
  local crc = crc32_prefix(token, BODY_LENGTH)
  local c1, c2, c3, c4, c5, c6 = byte(token, BODY_LENGTH + 1, KEY_LENGTH)
  return c1 == DIGIT[band(rshift(crc, 26), 63)]
     and c2 == DIGIT[band(rshift(crc, 20), 63)]
     and c3 == DIGIT[band(rshift(crc, 14), 63)]
     and c4 == DIGIT[band(rshift(crc, 8), 63)]
     and c5 == DIGIT[band(rshift(crc, 2), 63)]
     and c6 == DIGIT[band(lshift(crc, 4), 63)]
end

--- What a bearer token is: one of the classes above. No hash and no look-up: byte checks, and
--- for a token of the key's length a CRC-32 and its base64url to compare.
function api_key.classify(token)
  local b1, b2, b3, b4 = byte(token, 1, 4)
  if b1 ~= A or b2 ~= S or b3 ~= K or b4 ~= UNDERSCORE then
    return api_key.UNPREFIXED
  end

  local length = #token
  if length ~= KEY_LENGTH and length ~= LEGACY_LENGTH then
    return api_key.MALFORMED
  end
  for i = 5, length do
    if not BASE64URL[byte(token, i)] then
      return api_key.MALFORMED
    end
  end

  if length == LEGACY_LENGTH then
    return api_key.LEGACY
  end
  return checksum_matches(token) and api_key.CHECKSUMMED or api_key.MALFORMED
end

-- The token of `Authorization: Bearer <token>` (RFC 6750 2.1): blanks, the scheme
-- case-insensitive, blanks, one token of b64token characters ([%w%-%._~%+/]) then any "=", blanks.
-- Inside nginx one ngx.re.find (PCRE, compiled once; LuaJIT compiles the FFI call); under the
-- luajit command (the unit cases) one string.find of the same form. A loop over the header's
-- bytes, as before, cut the traces of the edge plugin's access at their first turn ("inner loop
-- in root trace"), and access ran interpreted.
local BEARER_REGEX = [[^[\t\n\x0b\f\r ]*bearer[\t\n\x0b\f\r ]+([A-Za-z0-9._~+/-]+=*)[\t\n\x0b\f\r ]*\z]]
local BEARER_PATTERN = "^%s*[Bb][Ee][Aa][Rr][Ee][Rr]%s+()[%w%-%._~%+/]+=*()%s*$"
local re_find = ngx.re and ngx.re.find

-- (the token is read into a local before it is returned: `return sub(...)` is a tail call to a
-- fast function, whose return to the caller's frame LuaJIT's trace recorder cannot follow)
local function bearer_by_pattern(authorization)
  local _, _, first, after = find(authorization, BEARER_PATTERN)
  if not first then
    return nil
  end
  local token = sub(authorization, first, after - 1)
  return token
end

local function bearer_by_regex(authorization)
  local from, to = re_find(authorization, BEARER_REGEX, "joi", nil, 1)
  if not from then
    return nil
  end
  local token = sub(authorization, from, to)
  return token
end

local bearer = re_find and bearer_by_regex or bearer_by_pattern

--- The bearer token of an Authorization header, or nil for no header or any other form.
function api_key.bearer_token(authorization)
  if not authorization then
    return nil
  end
  local token = bearer(authorization)
  return token
end

-- the luajit command's form, which a spec compares with the regex inside nginx
api_key.bearer_token_by_pattern = bearer_by_pattern

-- One context per worker, reset for each token: nothing yields between reset and final.
local hasher

--- The lower-case hex SHA-256 of the token: what a hashed credential stores as its key. nil and
--- an error when OpenSSL cannot hash.
function api_key.digest(token)
  if hasher then
    hasher:reset()
  else
    local err
    hasher, err = sha256:new()
    if not hasher then
      return nil, err or "could not create a SHA-256 context"
    end
  end
  hasher:update(token)
  local digest = hasher:final()
  if not digest then
    return nil, "SHA-256 failed"
  end
  return to_hex(digest)
end

--- true when a credential (as kong.db returns it) holds a digest rather than the key itself.
function api_key.is_hashed(credential)
  local tags = credential.tags
  if type(tags) ~= "table" then
    return false
  end
  for i = 1, #tags do
    if tags[i] == api_key.HASHED_TAG then
      return true
    end
  end
  return false
end

return api_key
