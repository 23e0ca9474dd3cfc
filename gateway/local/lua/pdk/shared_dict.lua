-- ngx.shared.DICT (lua-resty-core's shdict API) for the lua_shared_dict names the gateway was
-- started with, in process; expiry follows the phase's clock.
local phase = require "pdk.phase"

local SharedDict = {}
SharedDict.__index = SharedDict

local function live(self, key)
  local e = self.data[key]
  if e and e.exp and e.exp <= phase.now_ms then
    self.data[key] = nil
    return nil
  end
  return e
end

local function expiry(exptime)
  return (exptime and exptime > 0) and (phase.now_ms + exptime * 1000) or nil
end

function SharedDict:get(key)
  local e = live(self, key)
  if not e then return nil end
  return e.value, e.flags
end

function SharedDict:set(key, value, exptime, flags)
  if value == nil then
    self.data[key] = nil
  else
    self.data[key] = { value = value, flags = flags, exp = expiry(exptime) }
  end
  return true, nil, false
end
SharedDict.safe_set = SharedDict.set

function SharedDict:add(key, value, exptime, flags)
  if live(self, key) then return false, "exists", false end
  return self:set(key, value, exptime, flags)
end
SharedDict.safe_add = SharedDict.add

function SharedDict:replace(key, value, exptime, flags)
  if not live(self, key) then return false, "not found", false end
  return self:set(key, value, exptime, flags)
end

function SharedDict:incr(key, value, init, init_ttl)
  local e = live(self, key)
  if not e then
    if init == nil then return nil, "not found" end
    self:set(key, init + value, init_ttl)
    return init + value, nil, false
  end
  if type(e.value) ~= "number" then return nil, "not a number" end
  e.value = e.value + value
  return e.value, nil, false
end

function SharedDict:delete(key) self.data[key] = nil end

function SharedDict:ttl(key)
  local e = live(self, key)
  if not e then return nil, "not found" end
  if not e.exp then return 0 end
  return (e.exp - phase.now_ms) / 1000
end

function SharedDict:expire(key, exptime)
  local e = live(self, key)
  if not e then return nil, "not found" end
  e.exp = expiry(exptime)
  return true
end

function SharedDict:flush_all() self.data = {} end

function SharedDict:flush_expired()
  local n = 0
  for k in pairs(self.data) do
    if not live(self, k) then n = n + 1 end
  end
  return n
end

function SharedDict:get_keys(max)
  local keys = {}
  for k in pairs(self.data) do
    if live(self, k) then
      keys[#keys + 1] = k
      if max and max > 0 and #keys >= max then break end
    end
  end
  return keys
end

--- The ngx.shared table: one dict per name.
return function(names)
  local shared = {}
  for _, name in ipairs(names) do shared[name] = setmetatable({ data = {} }, SharedDict) end
  return shared
end
