-- kong.cache on a data-plane node: Kong's get(key, opts, callback, ...) (kong/cache/init.lua over
-- lua-resty-mlcache) without keeping anything. What the callbacks read, kong.db over the entity
-- index, already is this worker's in-memory copy, replaced whole with each snapshot: a cache in
-- front of it would save nothing and could only be invalidated wrong.
--
--   kong.cache:get(key, opts, callback, ...) -> value, nil, 3 | nil, err
--       the callback's value (its err when it returns one); 3 is mlcache's "the callback ran".
local type = type
local pcall = pcall
local error = error
local tostring = tostring

local Cache = {}

function Cache:get(key, _, callback, ...)
  if type(key) ~= "string" then
    error("key must be a string", 2)
  end
  if type(callback) ~= "function" then
    error("callback must be a function", 2)
  end
  local ok, value, err = pcall(callback, ...)
  if not ok then
    return nil, "callback threw an error: " .. tostring(value)
  end
  if err then
    return nil, tostring(err)
  end
  return value, nil, 3
end

local cache = {}

function cache.new()
  return setmetatable({}, { __index = Cache })
end

return cache
