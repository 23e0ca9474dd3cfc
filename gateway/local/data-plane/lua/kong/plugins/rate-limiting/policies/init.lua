-- The counters of rate-limiting, with Kong 3.9's policies (kong/plugins/rate-limiting/policies/
-- init.lua): "local" in the node's shared dict, "redis" in Redis with Kong's key layout and
-- expiry, so that a Kong node and this one count together in one Redis. ("cluster" needs Kong's
-- database; the control plane refuses it, as Kong's hybrid mode does.)
--
-- A policy works on the periods a configuration limits (the handler's derived list) and on the
-- counter keys the handler built for this request:
--   usage(conf, derived, keys, starts, counts) fills counts[i]; true, or nil and an error
--   increment(conf, derived, keys, starts, value) counts the request; true, or nil and an error
local redis = require "resty.redis"
local EXPIRATION = require "kong.plugins.rate-limiting.expiration"
local each_until = require("kong.plugins.rate-limiting.unrolled").each_until


local kong = kong
local ngx = ngx
local null = ngx.null
local pairs = pairs
local pcall = pcall
local timer_at = ngx.timer.at
local clear_tab = require "table.clear"
local fmt = string.format


local SYNC_RATE_REALTIME = -1
local EMPTY_UUID = "00000000-0000-0000-0000-000000000000"

-- Redis: count, and start the expiry with the first count (the reply is the count before).
local INCR_SCRIPT = [[
        local cache_key, expiration = KEYS[1], ARGV[1]
        local result_incr = redis.call("incr", cache_key)
        if result_incr == 1 then
          redis.call("expire", cache_key, expiration)
        end

        return result_incr - 1
      ]]

-- Redis: add a batch of counts; a key the batch creates expires at the given instant.
local SYNC_SCRIPT = [[
      local key, value, expiration = KEYS[1], tonumber(ARGV[1]), ARGV[2]
      local exists = redis.call("exists", key)
      redis.call("incrby", key, value)
      if not exists or exists == 0 then
        redis.call("expireat", key, expiration)
      end
    ]]


local _M = {}


--- "ratelimit:<route id>:<service id>:" for a configuration, as Kong's get_local_key starts; the
--- ids are those of the plugin's route and service, or the empty UUID.
function _M.key_prefix(conf)
  local service_id = conf.service_id
  local route_id = conf.route_id
  if not service_id or service_id == null then
    service_id = EMPTY_UUID
  end
  if not route_id or route_id == null then
    route_id = EMPTY_UUID
  end
  return fmt("ratelimit:%s:%s:", route_id, service_id)
end


--------------------------------------------------------------------------------------------------
-- local
--------------------------------------------------------------------------------------------------

local shm = ngx.shared.kong_rate_limiting_counters


-- Each step runs for periods 1 to n through kong.plugins.rate-limiting.unrolled: an error stops
-- at the period that failed.

local function read_count(i, keys, counts)
  local value, err = shm:get(keys[i])
  counts[i] = value or 0
  return err
end


local function count_request(i, periods, keys, value)
  local period = periods[i].name
  local newval, err = shm:incr(keys[i], value, 0, EXPIRATION[period])
  if not newval then
    kong.log.err("could not increment counter for period '", period, "': ", err)
  end
  return err
end


-- Counting first (count, then uncount or complete): the request's incr of each period returns
-- the count before it, so the path that lets the request through makes one shared-dict operation
-- per period where Kong's makes two (get in usage, incr in increment: policies/init.lua:322,
-- :308). What Kong observes stays: the counts the headers and the refusal follow from are those
-- before the request; a refused request is taken back out (Kong never counts it: handler.lua:194-
-- 201, before the increment at :208-216); and a period's key is made only by a request that is
-- counted, with Kong's init 0 and TTL (:308), so that its expiry starts where Kong's does. Only
-- another worker reading in the instant between a refused request's incr and its taking back
-- sees one more. The shared dict does not yield: no other request runs between count and
-- uncount or complete, and MISSING can be this worker's.
local MISSING = {}
local failed_at


-- incr without init: an existing key is counted, a missing one is left for complete()
local function count_existing(i, keys, counts)
  local newval, err = shm:incr(keys[i], 1)
  if newval then
    counts[i] = newval - 1
    MISSING[i] = false
    return nil
  end
  if err == "not found" then
    counts[i] = 0
    MISSING[i] = true
    return nil
  end
  failed_at = i
  return err
end


local function uncount_existing(i, keys)
  if not MISSING[i] then
    -- the key may have expired since: nothing to take back then
    shm:incr(keys[i], -1)
  end
end


local function create_missing(i, periods, keys)
  if MISSING[i] then
    return count_request(i, periods, keys, 1)
  end
end


_M["local"] = {
  --- Counts the request in every period and fills counts[i] with the count before it: true; or
  --- nil and an error, the request then not counted at all (usage and increment are Kong's way).
  count = function(conf, derived, keys, starts, counts)
    local n = derived.n
    local err = each_until(n, count_existing, keys, counts)
    if err then
      for i = 1, failed_at - 1 do
        uncount_existing(i, keys)
      end
      return nil, err
    end
    return true
  end,

  --- Takes back what count() counted: the request is refused.
  uncount = function(conf, derived, keys)
    each_until(derived.n, uncount_existing, keys)
  end,

  --- Makes the keys count() found missing, counting the request in them: it is let through.
  complete = function(conf, derived, keys)
    local err = each_until(derived.n, create_missing, derived.periods, keys)
    if err then
      return nil, err
    end
    return true
  end,

  usage = function(conf, derived, keys, starts, counts)
    local err = each_until(derived.n, read_count, keys, counts)
    if err then
      return nil, err
    end
    return true
  end,

  increment = function(conf, derived, keys, starts, value)
    local err = each_until(derived.n, count_request, derived.periods, keys, value)
    if err then
      return nil, err
    end
    return true
  end,
}


--------------------------------------------------------------------------------------------------
-- redis
--------------------------------------------------------------------------------------------------

local function is_present(str)
  return str and str ~= "" and str ~= null
end


--- "host:port;database": names the Redis a configuration counts in, and its connection pool
--- when the database is not 0.
function _M.db_key(conf)
  local redis_conf = conf.redis
  return fmt("%s:%d;%d", redis_conf.host, redis_conf.port, redis_conf.database)
end


-- Kong reuses one options table for every connect and so never resets `pool` once a database
-- other than 0 set it; each configuration has its own options here, the pool as Kong intends.
function _M.sock_opts(conf, db_key)
  local redis_conf = conf.redis
  return {
    pool = redis_conf.database ~= 0 and db_key or nil,
    ssl = redis_conf.ssl,
    ssl_verify = redis_conf.ssl_verify,
    server_name = redis_conf.server_name,
  }
end


local function get_redis_connection(conf, derived)
  local redis_conf = conf.redis
  local red, err = redis:new()
  if not red then
    return nil, err
  end

  red:set_timeout(redis_conf.timeout)

  local ok
  ok, err = red:connect(redis_conf.host, redis_conf.port, derived.sock_opts)
  if not ok then
    kong.log.err("failed to connect to Redis: ", err)
    return nil, err
  end

  local times
  times, err = red:get_reused_times()
  if err then
    kong.log.err("failed to get connect reused times: ", err)
    red:close()
    return nil, err
  end

  if times == 0 then
    if is_present(redis_conf.password) then
      if is_present(redis_conf.username) then
        ok, err = red:auth(redis_conf.username, redis_conf.password)
      else
        ok, err = red:auth(redis_conf.password)
      end
      if not ok then
        kong.log.err("failed to auth Redis: ", err)
        red:close()
        return nil, err
      end
    end

    if redis_conf.database ~= 0 then
      -- The pool is per database: SELECT once, on a new connection.
      ok, err = red:select(redis_conf.database)
      if not ok then
        kong.log.err("failed to change Redis database: ", err)
        red:close()
        return nil, err
      end
    end
  end

  return red
end


-- With sync_rate > 0 each worker keeps, per Redis (db_key) and counter key, the count it last read,
-- when that count expires, and what it counted since; a timer adds the deltas to Redis.
local cur_usage = {}
local cur_usage_expire_at = {}
local cur_delta = {}


local function init_tables(db_key)
  local usage = cur_usage[db_key]
  if not usage then
    usage = {}
    cur_usage[db_key] = usage
    cur_usage_expire_at[db_key] = {}
    cur_delta[db_key] = {}
  end
  return usage, cur_usage_expire_at[db_key], cur_delta[db_key]
end


local function clear_local_counter(db_key)
  local usage = cur_usage[db_key]
  if usage then
    clear_tab(usage)
    clear_tab(cur_usage_expire_at[db_key])
    clear_tab(cur_delta[db_key])
  end
end


--- Sends this worker's deltas to Redis. Kong reads the shared delta table while the pipeline is
--- built and clears it once the commit returned: two plugins' timers syncing one Redis at once
--- send the same deltas twice, and what requests count while a commit waits on Redis is lost.
--- Here a sync takes the table it sends and leaves a new one for the requests meanwhile.
local function sync_to_redis(conf, derived)
  local db_key = derived.db_key
  local red, err = get_redis_connection(conf, derived)
  if not red then
    kong.log.err("[rate-limiting] failed to connect to Redis: ", err)
    clear_local_counter(db_key)
    return
  end

  local usage, expire_at, sending = init_tables(db_key)
  cur_delta[db_key] = {}

  red:init_pipeline()
  for cache_key, value in pairs(sending) do
    if value ~= 0 then
      red:eval(SYNC_SCRIPT, 1, cache_key, value, expire_at[cache_key])
    end
  end

  local _, commit_err = red:commit_pipeline()
  if commit_err then
    kong.log.err("[rate-limiting] failed to commit increment pipeline in Redis: ", commit_err)
    clear_local_counter(db_key)
    return
  end

  local ok
  ok, err = red:set_keepalive(10000, 100)
  if not ok then
    kong.log.err("[rate-limiting] failed to set Redis keepalive: ", err)
  end

  -- Every count sent is forgotten, so the next request reads Redis (with the other nodes' counts);
  -- what was counted meanwhile stays pending, with the expiry its next sync needs.
  local pending = cur_delta[db_key]
  for cache_key in pairs(sending) do
    usage[cache_key] = nil
    if pending[cache_key] == nil then
      expire_at[cache_key] = nil
    end
  end
end


-- Per plugin instance and worker: at most one sync timer pending and one running, so a change
-- reaches Redis within sync_rate seconds and timers start at least sync_rate apart.
local plugin_sync_pending = {}
local plugin_sync_running = {}


local function sync_timer(premature, conf, derived, cache_key)
  if premature then
    -- the pending flag stays: any later timer would end prematurely too
    return
  end

  local tries = 0
  while plugin_sync_running[cache_key] do
    if tries > 4 then
      kong.log.emerg("A Redis sync is blocked by a previous try. ",
                     "The previous try should have timed out but it didn't for unknown reasons.")
    end
    -- Kong sleeps timeout / 2 there, a timeout in milliseconds taken as seconds; this is the
    -- half timeout Kong means.
    ngx.sleep(conf.redis.timeout / 2000)
    tries = tries + 1
  end

  plugin_sync_running[cache_key] = true
  plugin_sync_pending[cache_key] = nil

  local ok, err = pcall(sync_to_redis, conf, derived)
  if not ok then
    kong.log.err("[rate-limiting] error when syncing counters to Redis: ", err)
  end

  plugin_sync_running[cache_key] = nil
end


local function rate_limited_sync(conf, derived)
  local cache_key = conf.__key__ or conf.__plugin_id or "rate-limiting"

  if plugin_sync_pending[cache_key] then
    return true
  end

  plugin_sync_pending[cache_key] = true
  local ok, err = timer_at(conf.sync_rate, sync_timer, conf, derived, cache_key)
  if not ok then
    plugin_sync_pending[cache_key] = nil
    kong.log.err("[rate-limiting] failed to create the Redis sync timer: ", err)
    return nil, err
  end
  return true
end


_M.redis = {
  usage = function(conf, derived, keys, starts, counts)
    local batched = conf.sync_rate ~= SYNC_RATE_REALTIME
    local db_key = derived.db_key
    -- A sync replaces cur_delta[db_key] with a new table while Redis answers it, and this
    -- function yields on Redis too: the pending counts are read from cur_delta[db_key] at each
    -- use, never from a table taken before a yield (which the sync may have sent already).
    local usage, expire_at = init_tables(db_key)
    local periods = derived.periods
    local red, err

    for i = 1, derived.n do
      local cache_key = keys[i]
      local expiration = EXPIRATION[periods[i].name]
      local counted = batched and usage[cache_key]

      if counted then
        -- Kong compares an expiry in milliseconds with ngx.time() in seconds: a count read from
        -- Redis is used until the next sync clears it.
        if expire_at[cache_key] > ngx.time() then
          counts[i] = counted + (cur_delta[db_key][cache_key] or 0)
        else
          usage[cache_key] = 0
          expire_at[cache_key] = starts[i] + expiration
          cur_delta[db_key][cache_key] = 0
          counts[i] = 0
        end

      else
        if not red then
          red, err = get_redis_connection(conf, derived)
          if not red then
            return nil, err
          end
        end

        -- INCR rather than GET, so that concurrent requests never read the same count.
        local current_metric
        current_metric, err = red:eval(INCR_SCRIPT, 1, cache_key, expiration)
        if not current_metric then
          return nil, err
        end

        if current_metric == null then
          current_metric = nil
        end

        if batched then
          -- Concurrent requests' INCRs can come back out of order: the count only grows, so the
          -- highest seen stands (Kong keeps the last to return, a lower count under load).
          local seen = usage[cache_key]
          local count = current_metric or 0
          usage[cache_key] = (seen and seen > count) and seen or count
          expire_at[cache_key] = starts[i] + expiration
          -- INCR counted this request already; increment() will count it again locally. What
          -- this worker counted and has not sent yet stays pending.
          local pending = cur_delta[db_key]
          pending[cache_key] = (pending[cache_key] or 0) - 1
        end

        counts[i] = current_metric or 0
      end
    end

    if red then
      local ok
      ok, err = red:set_keepalive(10000, 100)
      if not ok then
        kong.log.err("failed to set Redis keepalive: ", err)
      end
    end

    return true
  end,

  increment = function(conf, derived, keys, starts, value)
    if conf.sync_rate == SYNC_RATE_REALTIME then
      -- usage() counted the request in Redis already
      return true
    end

    local _, _, delta = init_tables(derived.db_key)
    for i = 1, derived.n do
      local cache_key = keys[i]
      delta[cache_key] = (delta[cache_key] or 0) + value
    end

    return rate_limited_sync(conf, derived)
  end,
}


return _M
