-- resty.counter, as Kong's lua-resty-counter (0.2.1, a dependency of Kong 3.9.3) names it:
-- per-worker increments kept in a Lua table, added to a shared dict by a timer every
-- `sync_interval` seconds, so that the request path never takes the dict's lock. Used by the
-- prometheus plugin (kong/plugins/prometheus/prometheus.lua) for counters and histograms.
local ngx = ngx
local pairs = pairs
local type = type
local log = ngx.log
local ERR = ngx.ERR
local timer_every = ngx.timer.every
local clear_tab = require "table.clear"

local _M = { _VERSION = "0.2.1" }
local mt = { __index = _M }

--- Adds the increments of this worker to the dict and forgets them. An increment the dict has no
-- room for is logged, and returned as the number of failures (the caller may count them).
local function sync(self)
  local dict = self.dict
  local failures = 0
  for key, value in pairs(self.increments) do
    local _, err, forcible = dict:incr(key, value, 0)
    if err then
      failures = failures + 1
      log(ERR, "could not add to counter '", key, "' in lua_shared_dict '", self.dict_name, "': ", err)
    elseif forcible then
      -- the dict is full: nginx evicted the least recently used entries to make room
      failures = failures + 1
      log(ERR, "lua_shared_dict '", self.dict_name, "' is full: older counters were evicted to add '", key, "'")
    end
  end
  clear_tab(self.increments)
  return failures
end

--- A counter set on the shared dict `dict_name`; with `sync_interval` (seconds, in init_worker),
-- a timer syncs it, and once more when the worker exits.
function _M.new(dict_name, sync_interval, on_failures)
  local dict = ngx.shared[dict_name]
  if not dict then
    return nil, "lua_shared_dict '" .. tostring(dict_name) .. "' not found"
  end
  local self = setmetatable({
    dict = dict,
    dict_name = dict_name,
    increments = {},
    on_failures = on_failures,
  }, mt)
  if sync_interval then
    if type(sync_interval) ~= "number" or sync_interval <= 0 then
      return nil, "sync_interval must be a positive number"
    end
    local ok, err = timer_every(sync_interval, function()
      -- a premature run (the worker exits) syncs too: increments are not lost on reload
      self:sync()
    end)
    if not ok then
      return nil, "could not start the sync timer: " .. tostring(err)
    end
  end
  return self
end

function _M:incr(key, step)
  local increments = self.increments
  increments[key] = (increments[key] or 0) + (step or 1)
end

function _M:sync()
  local failures = sync(self)
  if failures > 0 and self.on_failures then
    self.on_failures(failures)
  end
  return failures
end

--- The dict's value of `key` (what every worker synced so far).
function _M:get(key)
  return self.dict:get(key)
end

function _M:get_keys(max_count)
  return self.dict:get_keys(max_count)
end

--- Sets `key` to `number` in the dict, dropping this worker's pending increments of it.
function _M:reset(key, number)
  self.increments[key] = nil
  return self.dict:set(key, number or 0)
end

return _M
