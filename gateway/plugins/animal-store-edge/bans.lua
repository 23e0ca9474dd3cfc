-- Strikes and bans of animal-store-edge, by key (whatever string the handler names a client by).
--
--   bans.check(conf, key)                      access: the key's running ban, or nil
--   bans.strike(conf, key, limit, who, now)    header_filter: counts a 429 of the key; past
--                                              ban_threshold within ban_window the key is banned
--
-- policy "local": the node's shared dict (conf.dict_name) holds everything.
-- policy "redis": Redis holds them for every node, and the dict keeps this node's copy. A check is
-- one GET on a pooled connection (none when the dict already knows the ban); a strike is one
-- script, run from a zero-delay timer because cosockets are not available in header_filter, which
-- counts and bans atomically however many nodes strike at once. When Redis cannot be reached the
-- node carries on with its dict (bans it knows, strikes it counts), warns at most once per
-- REDIS_WARN_INTERVAL, and tries Redis again after REDIS_RETRY_AFTER: never an error response.
--
-- A ban is "<until, unix s>:<limit>:<consumer username>". Windows and bans follow ngx.now(), the
-- clock the plugins see; the TTLs in the dict and in Redis follow real time and only bound memory.
local redis = require "resty.redis"
local to_hex = require("resty.string").to_hex
local metrics = require "kong.plugins.animal-store-edge.metrics"

local kong = kong
local ngx = ngx
local null = ngx.null
local floor = math.floor
local fmt = string.format
local match = string.match
local tonumber = tonumber
local tostring = tostring
local setmetatable = setmetatable
local unpack = unpack

local REDIS_PREFIX = "animal-store-edge:"
local REDIS_WARN_INTERVAL = 60 -- s, per node
local REDIS_RETRY_AFTER = 1    -- s, per node, after a failure
local KEEPALIVE_MS = 10000
local POOL_SIZE = 100
-- The redis record's defaults (kong/tools/redis/schema.lua:2,10-11,21), for a port, timeout or
-- database the configuration sets to null (the schema accepts it; Kong's DAO hands the handler nil,
-- kong/db/dao/init.lua:38-43). rate-limiting's schema refuses a null port or timeout with policy
-- redis (schema.lua:204-211) and its get_db_key raises on a null database (policies/init.lua:96-102);
-- this plugin has no such check, and never answers an error for Redis.
local DEFAULT_PORT = 6379
local DEFAULT_TIMEOUT = 2000
local DEFAULT_DATABASE = 0

-- KEYS: strikes hash, ban key. ARGV: now (ms), window (s), threshold, duration (s), ban record.
-- The hash holds the window's start ("since", ms of the plugin clock) and its count; the window
-- restarts when the plugin clock has moved past it, and the key expires with it in real time.
local STRIKE_SCRIPT = [[
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local since = tonumber(redis.call("HGET", KEYS[1], "since"))
local count
if not since or now - since >= window * 1000 then
  redis.call("HSET", KEYS[1], "since", now, "count", 1)
  redis.call("EXPIRE", KEYS[1], window)
  count = 1
else
  count = redis.call("HINCRBY", KEYS[1], "count", 1)
end
if count > tonumber(ARGV[3]) then
  redis.call("SET", KEYS[2], ARGV[5], "EX", ARGV[4])
  redis.call("DEL", KEYS[1])
  return 1
end
return 0
]]
local strike_script_sha


local bans = {}


local function ban_key(key)
  return "ban:" .. key
end


local function strikes_key(key)
  return "strikes:" .. key
end


local function since_key(key)
  return "since:" .. key
end


local function encode_ban(until_s, limit, username)
  return fmt("%d:%d:%s", until_s, limit or 0, username or "")
end


--- The ban a record describes while it runs by the plugin clock, or nil.
local function running_ban(record)
  if not record or record == null then
    return nil
  end
  local until_s, limit, username = match(record, "^(%d+):(%d+):?(.*)$")
  if not until_s then
    return nil
  end
  until_s = tonumber(until_s)
  if until_s <= ngx.now() then
    return nil
  end
  return { until_s = until_s, limit = tonumber(limit), username = username ~= "" and username or nil }
end


local function dict_of(conf)
  local dict = ngx.shared[conf.dict_name]
  if not dict then
    kong.log.err("lua_shared_dict '", conf.dict_name, "' is not declared; bans are disabled")
  end
  return dict
end


--- A ban has started (on this node, or in Redis by this node's strike): logged and counted.
local function log_ban(conf, who)
  metrics.ban_started(who.username)
  -- Names whose key it is (consumer and credential ids), never the key itself.
  kong.log.notice("API key banned for ", conf.ban_duration, " s after repeated 429s: consumer ",
                  who.username or "-", " (id ", who.consumer_id or "-", "), credential ", who.credential_id or "-")
end


--------------------------------------------------------------------------------------------------
-- the node's shared dict
--------------------------------------------------------------------------------------------------

--- Counts a 429 in the key's window, ban_window seconds from its first 429 by the plugin clock.
local function count_strike(dict, key, window, now)
  local since = dict:get(since_key(key))
  if not since or now - since >= window then
    dict:set(since_key(key), now, window)
    local ok, err = dict:set(strikes_key(key), 1, window)
    if not ok then
      return nil, err
    end
    return 1
  end
  return dict:incr(strikes_key(key), 1, 0, window)
end


local function remember_ban(dict, key, record, until_s, now)
  local ttl = until_s - now
  if ttl > 0 then
    dict:set(ban_key(key), record, ttl)
  end
end


local function strike_in_dict(conf, dict, key, limit, who, now)
  local strikes, err = count_strike(dict, key, conf.ban_window, now)
  if not strikes then
    kong.log.err("could not count a 429: ", err)
    return
  end
  if strikes > conf.ban_threshold then
    local until_s = floor(now) + conf.ban_duration
    remember_ban(dict, key, encode_ban(until_s, limit, who.username), until_s, now)
    dict:delete(strikes_key(key))
    dict:delete(since_key(key))
    log_ban(conf, who)
  end
end


--------------------------------------------------------------------------------------------------
-- Redis
--------------------------------------------------------------------------------------------------

-- Per configuration table: its Redis name (host:port;database) and connect options. Weak keys: a
-- new configuration brings new tables.
local redis_by_conf = setmetatable({}, { __mode = "k" })


local function is_present(value)
  return value ~= nil and value ~= null and value ~= ""
end


local function or_default(value, default)
  if value == nil or value == null then
    return default
  end
  return value
end


local function redis_of(conf)
  local target = redis_by_conf[conf]
  if target == nil then
    local redis_conf = conf.redis
    if conf.policy ~= "redis" then
      target = false
    elseif not redis_conf or not is_present(redis_conf.host) then
      kong.log.err("policy is redis but config.redis.host is not set: bans stay on this node")
      target = false
    else
      local port = or_default(redis_conf.port, DEFAULT_PORT)
      local database = or_default(redis_conf.database, DEFAULT_DATABASE)
      local name = fmt("%s:%d;%d", redis_conf.host, port, database)
      target = {
        name = name,
        conf = redis_conf,
        port = port,
        database = database,
        timeout = or_default(redis_conf.timeout, DEFAULT_TIMEOUT),
        -- a pool per database, as rate-limiting's: SELECT happens once per connection
        opts = {
          pool = database ~= 0 and name or nil,
          ssl = redis_conf.ssl,
          ssl_verify = redis_conf.ssl_verify,
          server_name = is_present(redis_conf.server_name) and redis_conf.server_name or nil,
        },
        down_key = "redis-down:" .. name,
        warned_key = "redis-warned:" .. name,
        failing_key = "redis-failing:" .. name,
      }
    end
    redis_by_conf[conf] = target
  end
  return target or nil
end


--- Whether to ask Redis now: not while a recent failure holds this node off it.
local function redis_usable(dict, target)
  return not dict:get(target.down_key)
end


local function redis_failed(dict, target, what, err)
  dict:set(target.down_key, true, REDIS_RETRY_AFTER)
  dict:set(target.failing_key, true)
  if dict:add(target.warned_key, true, REDIS_WARN_INTERVAL) then
    kong.log.warn("Redis ", target.name, " unreachable (", what, ": ", tostring(err),
                  "); bans and strikes stay on this node until it answers again (this warning: at most once per ",
                  REDIS_WARN_INTERVAL, " s)")
  end
end


local function connect(target)
  local redis_conf = target.conf
  local red, err = redis:new()
  if not red then
    return nil, err
  end
  red:set_timeout(target.timeout)
  local ok
  ok, err = red:connect(redis_conf.host, target.port, target.opts)
  if not ok then
    return nil, err
  end
  local times
  times, err = red:get_reused_times()
  if not times then
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
        red:close()
        return nil, "AUTH: " .. tostring(err)
      end
    end
    if target.database ~= 0 then
      ok, err = red:select(target.database)
      if not ok then
        red:close()
        return nil, "SELECT: " .. tostring(err)
      end
    end
  end
  return red, nil, times
end


--- After a round trip that worked: the connection back to its pool, and a recovery said once.
local function redis_answered(dict, target, red)
  local ok, err = red:set_keepalive(KEEPALIVE_MS, POOL_SIZE)
  if not ok then
    kong.log.debug("could not keep the Redis connection: ", err)
  end
  if dict:get(target.failing_key) then
    dict:delete(target.failing_key)
    kong.log.notice("Redis ", target.name, " answers again: bans are shared again")
  end
end


-- The cosocket's errors (lowercased strerror) for a connection the peer has closed: what a pooled
-- connection to a Redis that has restarted since gets.
local CONNECTION_LOST = {
  ["closed"] = true,
  ["connection reset by peer"] = true,
  ["broken pipe"] = true,
}


--- One round trip, `command(red, ...)`: its reply (false and the message for an error reply), or
--- nil when Redis could not be reached, which holds the node off Redis for REDIS_RETRY_AFTER. A
--- pooled connection to a Redis that has restarted since fails once, closed or reset: such a
--- failure is tried again on a fresh connection. Any other (a timeout: a hung Redis would keep a
--- fresh connection waiting as long again) counts as Redis failing, as any failure of a fresh
--- connection does: a request waits one redis.timeout on a Redis that hangs, not two.
local function round_trip(dict, target, what, command, ...)
  for _ = 1, 2 do
    local red, err, reused = connect(target)
    if not red then
      redis_failed(dict, target, "connect", err)
      return nil
    end
    local reply
    reply, err = command(red, ...)
    if reply ~= nil then
      redis_answered(dict, target, red)
      return reply, err
    end
    red:close()
    if reused == 0 or not CONNECTION_LOST[err] then
      redis_failed(dict, target, what, err)
      return nil
    end
  end
  redis_failed(dict, target, what, "pooled connections failed twice")
  return nil
end


local function run_strike_script(red, keys_and_args)
  if not strike_script_sha then
    strike_script_sha = to_hex(ngx.sha1_bin(STRIKE_SCRIPT))
  end
  local banned, err = red:evalsha(strike_script_sha, 2, unpack(keys_and_args))
  if banned == false and match(tostring(err), "^NOSCRIPT") then
    -- a Redis that has not seen the script yet (a new or restarted server): EVAL loads it
    banned, err = red:eval(STRIKE_SCRIPT, 2, unpack(keys_and_args))
  end
  return banned, err
end


local function get_ban(red, key)
  return red:get(REDIS_PREFIX .. ban_key(key))
end


local function strike_in_redis(premature, conf, target, key, limit, who, now)
  if premature then
    return
  end
  local dict = ngx.shared[conf.dict_name]
  if not redis_usable(dict, target) then
    return strike_in_dict(conf, dict, key, limit, who, now)
  end

  local until_s = floor(now) + conf.ban_duration
  local record = encode_ban(until_s, limit, who.username)
  local banned, err = round_trip(dict, target, "strike", run_strike_script, {
    REDIS_PREFIX .. strikes_key(key), REDIS_PREFIX .. ban_key(key),
    fmt("%d", floor(now * 1000)), conf.ban_window, conf.ban_threshold, conf.ban_duration, record,
  })
  if banned == nil then
    return strike_in_dict(conf, dict, key, limit, who, now)
  end
  if banned == false then
    -- an error reply (a read-only replica, a script Redis refuses): a configuration problem
    kong.log.err("Redis ", target.name, " refused the strike script: ", err)
    return strike_in_dict(conf, dict, key, limit, who, now)
  end
  if banned == 1 then
    remember_ban(dict, key, record, until_s, now)
    log_ban(conf, who)
  end
end


--------------------------------------------------------------------------------------------------
-- the plugin's calls
--------------------------------------------------------------------------------------------------

--- The running ban of `key` ({ until_s, limit, username }), or nil. Bans this node knows need no
--- round trip; otherwise, with policy redis, one GET (a ban found is kept in the dict).
function bans.check(conf, key)
  local dict = dict_of(conf)
  if not dict then
    return nil
  end
  local ban = running_ban(dict:get(ban_key(key)))
  if ban then
    return ban
  end

  local target = redis_of(conf)
  if not target or not redis_usable(dict, target) then
    return nil
  end
  local record, err = round_trip(dict, target, "check", get_ban, key)
  if record == nil then
    return nil
  end
  if record == false then
    kong.log.err("Redis ", target.name, " refused GET: ", err)
    return nil
  end
  ban = running_ban(record)
  if ban then
    remember_ban(dict, key, record, ban.until_s, ngx.now())
  end
  return ban
end


--- Counts a 429 of `key` (limit: the X-RateLimit-Limit it carried; who: { username, consumer_id,
--- credential_id } for the ban's record and log line; now: the plugin clock when it was answered).
function bans.strike(conf, key, limit, who, now)
  local dict = dict_of(conf)
  if not dict then
    return
  end
  local target = redis_of(conf)
  if target and redis_usable(dict, target) then
    local ok, err = ngx.timer.at(0, strike_in_redis, conf, target, key, limit, who, now)
    if ok then
      return
    end
    kong.log.err("could not start the timer that records a strike in Redis: ", err)
  end
  strike_in_dict(conf, dict, key, limit, who, now)
end


return bans
