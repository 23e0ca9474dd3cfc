-- The animal-store-edge plugin's cases, run by run.lua under the luajit command and by the test suite
-- in both of the local gateway's VMs. Each case returns nothing or raises an assertion error.
local stub = require "pdk_stub"
local handler = require "handler"
local api_key = require "kong.plugins.animal-store-edge.api_key"

local conf = { key_header = "apikey", realm = "animal-store", ban_threshold = 3, ban_window = 60,
               ban_duration = 900, dict_name = "animal_store_edge", accept_plaintext_keys = false }

local function eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s: expected %s, got %s", what, tostring(expected), tostring(actual)), 2)
  end
end

local function decode(body)
  return require("cjson").decode(body)
end

local cases = {}

-- test/fixtures/api-key-vectors.json: the CLI's test vectors (packages/provisioning/api-keys.ts made them)
local vectors = (function()
  local file = assert(io.open("test/fixtures/api-key-vectors.json", "rb"))
  local doc = require("cjson").decode(file:read("*a"))
  file:close()
  return doc
end)()

local function vector(class)
  for _, v in ipairs(vectors.vectors) do
    if v.class == class then return v end
  end
end

local KEY = vector("checksummed")

local function has_log(r, text)
  for _, line in ipairs(r.logs) do
    if line:find(text, 1, true) then return true end
  end
  return false
end

local function with_credentials(credentials, fn)
  stub.credentials = credentials
  local ok, err = pcall(fn)
  stub.credentials, stub.lookup_error = {}, nil
  if not ok then error(err, 0) end
end

local function migration(overrides)
  local c = {}
  for k, v in pairs(conf) do c[k] = v end
  c.accept_plaintext_keys = true
  for k, v in pairs(overrides or {}) do c[k] = v end
  return c
end

-- A live credential for `token`: its digest as key-auth's key, as the CLI stores one.
local function credential_of(token, fields)
  local digest = api_key.digest(token)
  local credential = { id = "cred-1", key = digest, tags = { "key-hash:sha256" } }
  for k, v in pairs(fields or {}) do credential[k] = v end
  return { [digest] = credential }
end

--- 429s of `token` (with a credential) until it is banned.
local function ban(token)
  for _ = 1, conf.ban_threshold + 1 do
    local r = stub.request({ Authorization = "Bearer " .. token })
    stub.run(handler, "access", conf)
    r.status, r.source, r.credential = 429, "exit", { id = "cred-1" }
    r.consumer = { id = "cons-1", username = "mallory" }
    r.response_headers["ratelimit-limit"] = "5"
    stub.run(handler, "header_filter", conf)
  end
end

cases["a bearer token's SHA-256 becomes key-auth's key and Authorization is dropped"] = function()
  local r = stub.request({ Authorization = "Bearer " .. KEY.token, apikey = "smuggled" })
  stub.run(handler, "access", conf)
  eq(r.upstream_headers.apikey, KEY.digest, "apikey")
  eq(r.upstream_headers.authorization, nil, "authorization")
end

cases["the scheme is case-insensitive and spaces around the token are tolerated"] = function()
  for _, value in ipairs({ "bearer " .. KEY.token, "BEARER " .. KEY.token, "Bearer   " .. KEY.token .. "  " }) do
    local r = stub.request({ Authorization = value })
    stub.run(handler, "access", conf)
    eq(r.upstream_headers.apikey, KEY.digest, value)
  end
end

cases["every test vector: malformed ask_ tokens refused unhashed and unlooked-up, the others hashed"] = function()
  local count = 0
  for _, v in ipairs(vectors.vectors) do
    local hashes, lookups = stub.hashes, stub.lookups
    local r = stub.request({ Authorization = "Bearer " .. v.token })
    stub.run(handler, "access", conf)
    local what = v.class .. " " .. v.token .. " (" .. v.why .. ")"
    eq(api_key.classify(v.token), v.class, "class: " .. what)
    -- RFC 6750's b64token: "=" only at the end. Any other is no bearer token at all (below).
    local bearer = v.token:match("^[%w%-%._~%+/]+=*$") ~= nil
    if v.class == "malformed" then
      eq(r.upstream_headers.apikey, nil, "no key for key-auth: " .. what)
      eq(stub.hashes, hashes, "not hashed: " .. what)
      eq(#r.logs, bearer and 1 or 0, "log lines: " .. what)
      if bearer then
        eq(has_log(r, "malformed API key refused before any look-up"), true, "the refusal is logged: " .. what)
        if v.token ~= "ask_" then -- the line names the prefix
          eq(r.logs[1]:find(v.token, 1, true), nil, "the log line does not quote the token")
        end
      end
      -- the request goes on as one with an invalid key: invalid_api_key once key-auth refuses it
      r.status, r.source = 401, "exit"
      stub.run(handler, "header_filter", conf)
      stub.run(handler, "body_filter", conf)
      eq(decode(r.body).code, bearer and "invalid_api_key" or "missing_api_key", "code: " .. what)
    else
      eq(r.upstream_headers.apikey, v.digest, "the digest for key-auth: " .. what)
      eq(stub.hashes, hashes + 1, "hashed once: " .. what)
      eq(#r.logs, 0, "nothing logged: " .. what)
    end
    eq(stub.lookups, lookups, "no credential look-up without accept_plaintext_keys: " .. what)
    count = count + 1
  end
  eq(count >= 30, true, "the vectors were read")
end

cases["the checksum is checked with the byte functions Kong has: ngx.crc32_long"] = function()
  -- each character of a valid key changed to each other base64url character: all refused
  local alphabet = vectors.format.alphabet
  local token = KEY.token
  local tried = 0
  for i = 5, #token do
    for j = 1, #alphabet do
      local c = alphabet:sub(j, j)
      if c ~= token:sub(i, i) then
        local changed = token:sub(1, i - 1) .. c .. token:sub(i + 1)
        eq(api_key.classify(changed), "malformed", changed)
        tried = tried + 1
      end
    end
  end
  eq(tried, 49 * 63, "one-character changes tried")
end

cases["other forms carry no key"] = function()
  for _, value in ipairs({ "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Bearer", "Bearer ", "Bearer a b", "Token ask_abc" }) do
    local r = stub.request({ Authorization = value, apikey = "smuggled" })
    stub.run(handler, "access", conf)
    eq(r.upstream_headers.apikey, nil, value)
  end
end

cases["X-RateLimit-* come from RateLimit-*; Reset is an absolute unix time"] = function()
  local r = stub.request({})
  r.response_headers["ratelimit-limit"] = "60"
  r.response_headers["ratelimit-remaining"] = "12"
  r.response_headers["ratelimit-reset"] = "30"
  stub.run(handler, "header_filter", conf)
  eq(r.response_headers["x-ratelimit-limit"], "60", "limit")
  eq(r.response_headers["x-ratelimit-remaining"], "12", "remaining")
  eq(r.response_headers["x-ratelimit-reset"], string.format("%d", ngx.time() + 30), "reset")
end

cases["X-RateLimit-Reset counts from the access phase, when rate-limiting counted, not from the answer"] = function()
  for _, headers in ipairs({ {}, { Authorization = "Bearer " .. KEY.token } }) do
    local r = stub.request(headers)
    stub.run(handler, "access", conf)
    local counted_at = ngx.time()
    stub.advance(45) -- the upstream's wait
    r.response_headers["ratelimit-limit"] = "60"
    r.response_headers["ratelimit-remaining"] = "12"
    r.response_headers["ratelimit-reset"] = "30"
    stub.run(handler, "header_filter", conf)
    eq(r.response_headers["x-ratelimit-reset"], string.format("%d", counted_at + 30), "reset")
  end
end

cases["a gateway 401 without a key becomes missing_api_key with a Bearer challenge"] = function()
  local r = stub.request({})
  stub.run(handler, "access", conf)
  r.status, r.source = 401, "exit"
  stub.run(handler, "header_filter", conf)
  eq(r.response_headers["www-authenticate"], 'Bearer realm="animal-store"', "challenge")
  eq(r.response_headers["content-type"], "application/json; charset=utf-8", "content type")
  r.body = '{"message":"Unauthorized"}'
  stub.run(handler, "body_filter", conf)
  local body = decode(r.body)
  eq(body.code, "missing_api_key", "code")
  eq(body.status, 401, "status")
end

cases["a gateway 401 with a key becomes invalid_api_key"] = function()
  local r = stub.request({ Authorization = "Bearer " .. KEY.token })
  stub.run(handler, "access", conf)
  r.status, r.source = 401, "exit"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(decode(r.body).code, "invalid_api_key", "code")
end

cases["a 431 of animal-store-access (a key behind more than 100 header fields): request_headers_too_large"] = function()
  local r = stub.request({ Authorization = "Bearer " .. KEY.token })
  stub.run(handler, "access", conf)
  r.status, r.source = 431, "exit"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(r.status, 431, "status")
  eq(decode(r.body).code, "request_headers_too_large", "code")
  eq(r.response_headers["www-authenticate"], nil, "no challenge: the key was never read")
end

cases["a 403 of animal-store-access: forbidden, or insufficient_scope naming the scope (RFC 6750 3.1)"] = function()
  local r = stub.request({ Authorization = "Bearer " .. KEY.token })
  stub.run(handler, "access", conf)
  r.status, r.source = 403, "exit"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(decode(r.body).code, "forbidden", "a consumer outside the group")
  eq(r.response_headers["www-authenticate"], nil, "no challenge")

  r = stub.request({ Authorization = "Bearer " .. KEY.token })
  stub.run(handler, "access", conf)
  r.status, r.source, r.shared.animal_store_missing_scope = 403, "exit", "orders:write"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  local body = decode(r.body)
  eq(body.code, "insufficient_scope", "code")
  eq(body.message, "This API key lacks the scope orders:write.", "message")
  eq(r.response_headers["www-authenticate"], 'Bearer realm="animal-store", error="insufficient_scope", scope="orders:write"', "challenge")
end

cases["errors from the service pass through untouched"] = function()
  local r = stub.request({})
  r.status, r.source, r.body = 404, "service", '{"code":"pet_not_found"}'
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(r.body, '{"code":"pet_not_found"}', "body")
end

cases["a 502 from the gateway becomes bad_gateway"] = function()
  local r = stub.request({})
  r.status, r.source = 502, "exit"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(decode(r.body).code, "bad_gateway", "code")
end

cases["more than ban_threshold 429s within the window ban the key, until the ban expires"] = function()
  stub.set_time(1893499200)
  with_credentials(credential_of("greedy"), function()
    local lookups = stub.lookups
    for i = 1, conf.ban_threshold + 1 do
      local r = stub.request({ Authorization = "Bearer greedy" })
      stub.run(handler, "access", conf)
      eq(r.exited, nil, "no ban before the threshold (" .. i .. ")")
      r.status, r.source, r.credential = 429, "exit", { id = "cred-1" }
      r.consumer = { id = "cons-1", username = "mallory" }
      r.response_headers["ratelimit-limit"] = "5"
      stub.run(handler, "header_filter", conf)
      eq(#r.logs, i > conf.ban_threshold and 1 or 0, "log lines after 429 number " .. i)
      if i > conf.ban_threshold then
        eq(r.logs[1], "API key banned for 900 s after repeated 429s: consumer mallory (id cons-1), credential cred-1", "ban log line")
        eq(r.logs[1]:find("greedy", 1, true), nil, "the key is never logged")
      end
    end
    eq(stub.lookups, lookups, "no credential look-up for a key that is not banned")
    local banned = stub.request({ Authorization = "Bearer greedy" })
    stub.run(handler, "access", conf)
    eq(banned.exited and banned.exited.status, 429, "banned")
    eq(banned.response_headers["retry-after"], "900", "retry-after")
    eq(stub.lookups, lookups + 1, "a banned key's credential looked up once")
    stub.run(handler, "header_filter", conf)
    stub.run(handler, "body_filter", conf)
    eq(decode(banned.body).code, "api_key_banned", "code")
    eq(banned.response_headers["x-ratelimit-limit"], "5", "limit while banned")
    stub.advance(900)
    local later = stub.request({ Authorization = "Bearer greedy" })
    stub.run(handler, "access", conf)
    eq(later.exited, nil, "ban expired")
  end)
end

cases["a banned key revoked, deleted or expired since answers key-auth's 401 invalid_api_key, not the ban"] = function()
  stub.set_time(1893550000)
  local token = "greedy-and-gone"
  local digest = api_key.digest(token)
  with_credentials(credential_of(token), function()
    ban(token)
    for what, credentials in pairs({
      ["revoked or deleted"] = {},
      ["expired (key-auth's loader: ttl 0 is no credential)"] = credential_of(token, { ttl = 0 }),
    }) do
      stub.credentials = credentials
      local r = stub.request({ Authorization = "Bearer " .. token })
      stub.run(handler, "access", conf)
      eq(r.exited, nil, what .. ": no ban answered")
      eq(r.upstream_headers.apikey, digest, what .. ": key-auth gets the digest, and refuses it")
      r.status, r.source = 401, "exit"
      stub.run(handler, "header_filter", conf)
      stub.run(handler, "body_filter", conf)
      eq(decode(r.body).code, "invalid_api_key", what .. ": code")
      eq(r.response_headers["retry-after"], nil, what .. ": no Retry-After")
      eq(r.response_headers["x-ratelimit-limit"], nil, what .. ": not the banned consumer's limit")
      eq(#r.logs, 0, what .. ": nothing logged")
    end
    -- the ban is kept: the key banned again as long as it runs, should its credential come back
    stub.credentials = credential_of(token)
    local r = stub.request({ Authorization = "Bearer " .. token })
    stub.run(handler, "access", conf)
    eq(r.exited and r.exited.status, 429, "a live credential again: banned")
  end)
end

cases["accept_plaintext_keys: a banned plaintext credential stays banned, and goes when it does"] = function()
  stub.set_time(1893560000)
  local token = "plaintext-and-greedy" -- each ban case a token of its own: its ban outlives it
  local on = migration()
  with_credentials({ [token] = { id = "c2", key = token, tags = { "petstore-consumer" } } }, function()
    for _ = 1, conf.ban_threshold + 1 do
      local r = stub.request({ Authorization = "Bearer " .. token })
      stub.run(handler, "access", on)
      eq(r.upstream_headers.apikey, token, "the token for key-auth")
      r.status, r.source, r.credential = 429, "exit", { id = "c2" }
      stub.run(handler, "header_filter", on)
    end
    local banned = stub.request({ Authorization = "Bearer " .. token })
    stub.run(handler, "access", on)
    eq(banned.exited and banned.exited.status, 429, "banned under the digest, found by the token")

    stub.credentials = {}
    local gone = stub.request({ Authorization = "Bearer " .. token })
    stub.run(handler, "access", on)
    eq(gone.exited, nil, "revoked: no ban answered")
    eq(gone.upstream_headers.apikey, api_key.digest(token), "the digest for key-auth, which matches nothing")
  end)
end

cases["a look-up error while a key is banned is a 500 whose log line quotes no key"] = function()
  stub.set_time(1893570000)
  local token = "greedy-and-unlucky"
  with_credentials(credential_of(token), function()
    ban(token)
    stub.lookup_error = "could not reach the database for key " .. token
    local r = stub.request({ Authorization = "Bearer " .. token })
    stub.run(handler, "access", conf)
    eq(r.exited and r.exited.status, 500, "status")
    eq(r.upstream_headers.apikey, nil, "no key")
    eq(#r.logs, 1, "one log line")
    eq(r.logs[1]:find(token, 1, true), nil, "the token is not logged")
    eq(r.logs[1]:find(api_key.digest(token), 1, true), nil, "nor its digest")
  end)
end

cases["429s without a credential (anonymous traffic) never ban"] = function()
  stub.set_time(1893600000)
  for _ = 1, conf.ban_threshold + 2 do
    local r = stub.request({ Authorization = "Bearer unknown" })
    stub.run(handler, "access", conf)
    r.status, r.source = 429, "exit"
    stub.run(handler, "header_filter", conf)
  end
  local r = stub.request({ Authorization = "Bearer unknown" })
  stub.run(handler, "access", conf)
  eq(r.exited, nil, "not banned")
end

cases["accept_plaintext_keys: a hashed credential gets the digest, a plaintext one the token"] = function()
  local legacy = vector("legacy")
  local hashed_key, plain_key = KEY, legacy
  with_credentials({
    [hashed_key.digest] = { id = "c1", key = hashed_key.digest, tags = { "petstore-consumer", "key-hash:sha256" } },
    [plain_key.token] = { id = "c2", key = plain_key.token, tags = { "petstore-consumer" } },
    ["s3cr3t-made-by-hand"] = { id = "c3", key = "s3cr3t-made-by-hand" }, -- no tags at all
  }, function()
    local on = migration()
    local function key_for(token)
      local r = stub.request({ Authorization = "Bearer " .. token })
      stub.run(handler, "access", on)
      eq(#r.logs, 0, "nothing logged for " .. token)
      return r.upstream_headers.apikey
    end
    local lookups = stub.lookups
    eq(key_for(hashed_key.token), hashed_key.digest, "hashed credential")
    eq(stub.lookups, lookups + 1, "one look-up when the digest is found")
    eq(key_for(plain_key.token), plain_key.token, "plaintext credential: the token as is")
    eq(stub.lookups, lookups + 3, "two look-ups for a plaintext credential")
    eq(key_for("s3cr3t-made-by-hand"), "s3cr3t-made-by-hand", "hand-made plaintext credential")
    eq(key_for(vector("unprefixed").token), vector("unprefixed").digest, "unknown: the digest")

    -- off (the default): no look-up, always the digest; the plaintext credential is unreachable
    lookups = stub.lookups
    local r = stub.request({ Authorization = "Bearer " .. plain_key.token })
    stub.run(handler, "access", conf)
    eq(r.upstream_headers.apikey, plain_key.digest, "off: the digest")
    eq(stub.lookups, lookups, "off: no look-up")
  end)
end

cases["accept_plaintext_keys: a stored digest sent as a token is not handed over as a key"] = function()
  with_credentials({
    [KEY.digest] = { id = "c1", key = KEY.digest, tags = { "key-hash:sha256" } },
  }, function()
    local r = stub.request({ Authorization = "Bearer " .. KEY.digest })
    stub.run(handler, "access", migration())
    eq(r.upstream_headers.apikey ~= KEY.digest, true, "the stored value is never key-auth's key")
    eq(r.upstream_headers.apikey, require("resty.string").to_hex((function()
      local h = require("resty.sha256"):new()
      h:update(KEY.digest)
      return h:final()
    end)()), "its digest instead, which no credential holds")
  end)
end

cases["accept_plaintext_keys: malformed ask_ tokens are still refused before any look-up"] = function()
  with_credentials({}, function()
    local malformed = vector("malformed")
    local lookups, hashes = stub.lookups, stub.hashes
    local r = stub.request({ Authorization = "Bearer " .. malformed.token })
    stub.run(handler, "access", migration())
    eq(r.upstream_headers.apikey, nil, "no key")
    eq(stub.lookups, lookups, "no look-up")
    eq(stub.hashes, hashes, "no hash")
  end)
end

cases["accept_plaintext_keys: a look-up error is a 500 whose log line quotes no key"] = function()
  with_credentials({}, function()
    stub.lookup_error = "could not reach the database for key " .. KEY.token
    local r = stub.request({ Authorization = "Bearer " .. KEY.token })
    stub.run(handler, "access", migration())
    eq(r.exited and r.exited.status, 500, "status")
    eq(r.upstream_headers.apikey, nil, "no key")
    eq(#r.logs, 1, "one log line")
    eq(r.logs[1]:find(KEY.token, 1, true), nil, "the token is not logged")
    eq(r.logs[1]:find(KEY.digest, 1, true), nil, "nor its digest")
  end)
end

cases["bans and strikes are stored under the key's digest, never the key"] = function()
  stub.set_time(1893700000)
  local key = vectors.vectors[2] -- a key of its own: the ban outlives this case
  eq(key.class, "checksummed", "class")
  with_credentials(credential_of(key.token), function()
    local dict = ngx.shared.animal_store_edge
    for _ = 1, conf.ban_threshold + 1 do
      local r = stub.request({ Authorization = "Bearer " .. key.token })
      stub.run(handler, "access", conf)
      r.status, r.source, r.credential = 429, "exit", { id = "cred-9" }
      stub.run(handler, "header_filter", conf)
    end
    eq(dict:get("ban:" .. key.digest) ~= nil, true, "banned under the digest")
    for name in pairs(dict.data) do
      eq(name:find(key.token, 1, true), nil, "dict key " .. name)
    end
    local banned = stub.request({ Authorization = "Bearer " .. key.token })
    stub.run(handler, "access", conf)
    eq(banned.exited and banned.exited.status, 429, "the key is banned")
  end)
  stub.advance(conf.ban_duration) -- the ban is over for the cases after this one
end

return cases
