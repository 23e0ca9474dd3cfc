-- The animal-store-edge plugin's cases, run by run.lua under the luajit command and by the test suite
-- in both of the local gateway's VMs. Each case returns nothing or raises an assertion error.
local stub = require "pdk_stub"
local handler = require "handler"

local conf = { key_header = "apikey", realm = "animal-store", ban_threshold = 3, ban_window = 60,
               ban_duration = 900, dict_name = "animal_store_edge" }

local function eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s: expected %s, got %s", what, tostring(expected), tostring(actual)), 2)
  end
end

local function decode(body)
  return require("cjson").decode(body)
end

local cases = {}

cases["a bearer token becomes key-auth's key and Authorization is dropped"] = function()
  local r = stub.request({ Authorization = "Bearer ask_abc", apikey = "smuggled" })
  stub.run(handler, "access", conf)
  eq(r.upstream_headers.apikey, "ask_abc", "apikey")
  eq(r.upstream_headers.authorization, nil, "authorization")
end

cases["the scheme is case-insensitive and spaces around the token are tolerated"] = function()
  for _, value in ipairs({ "bearer ask_abc", "BEARER ask_abc", "Bearer   ask_abc  " }) do
    local r = stub.request({ Authorization = value })
    stub.run(handler, "access", conf)
    eq(r.upstream_headers.apikey, "ask_abc", value)
  end
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
  local r = stub.request({ Authorization = "Bearer nope" })
  stub.run(handler, "access", conf)
  r.status, r.source = 401, "exit"
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(decode(r.body).code, "invalid_api_key", "code")
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
  local banned = stub.request({ Authorization = "Bearer greedy" })
  stub.run(handler, "access", conf)
  eq(banned.exited and banned.exited.status, 429, "banned")
  eq(banned.response_headers["retry-after"], "900", "retry-after")
  stub.run(handler, "header_filter", conf)
  stub.run(handler, "body_filter", conf)
  eq(decode(banned.body).code, "api_key_banned", "code")
  eq(banned.response_headers["x-ratelimit-limit"], "5", "limit while banned")
  stub.advance(900)
  local later = stub.request({ Authorization = "Bearer greedy" })
  stub.run(handler, "access", conf)
  eq(later.exited, nil, "ban expired")
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

return cases
