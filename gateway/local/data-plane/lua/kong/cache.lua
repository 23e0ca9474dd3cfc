-- kong.cache on a data-plane node: Kong's get(key, opts, callback, ...) (kong/cache/init.lua over
-- lua-resty-mlcache). What the callbacks read, kong.db over the entity index, changes only when
-- the worker installs a new snapshot: a value is kept, misses included (Kong caches those too),
-- until then, as Kong's cache keeps an entity until a change of the configuration invalidates it.
-- A value its callback returns with a ttl (a credential that expires) is not kept: the next get
-- asks the callback again, so an expiry is never late. At most MAX_ENTRIES are kept: past that
-- the cache starts over, so what clients send (keys that match nothing) cannot grow it.
--
--   kong.cache:get(key, opts, callback, ...) -> value, nil, hit_level | nil, err
--       hit_level: 1 when the value was kept (mlcache's L1), 3 when the callback ran. An error
--       (returned or thrown) is not kept.
local entities = require "kong.runloop.entities"

local type = type
local pcall = pcall
local error = error
local tostring = tostring
local setmetatable = setmetatable
local generation = entities.generation

local MAX_ENTRIES = 10000

-- what a kept miss is stored as (a nil value cannot be)
local NIL = {}

local Cache = {}

function Cache:get(key, opts, callback, ...)
  if type(key) ~= "string" then
    error("key must be a string", 2)
  end
  if type(callback) ~= "function" then
    error("callback must be a function", 2)
  end

  local entries = self.entries
  local current = generation()
  if self.generation ~= current then
    entries = {}
    self.entries = entries
    self.count = 0
    self.generation = current
  end

  local kept = entries[key]
  if kept ~= nil then
    if kept == NIL then
      return nil, nil, 1
    end
    return kept, nil, 1
  end

  local ok, value, err, ttl = pcall(callback, ...)
  if not ok then
    return nil, "callback threw an error: " .. tostring(value)
  end
  if err then
    return nil, tostring(err)
  end

  if ttl == nil and not (opts and (opts.ttl or opts.neg_ttl)) then
    local count = self.count
    if count >= MAX_ENTRIES then
      entries = {}
      self.entries = entries
      count = 0
    end
    if value == nil then
      entries[key] = NIL
    else
      entries[key] = value
    end
    self.count = count + 1
  end

  return value, nil, 3
end

local cache = {}

function cache.new()
  return setmetatable({ entries = {}, count = 0, generation = generation() }, { __index = Cache })
end

return cache
