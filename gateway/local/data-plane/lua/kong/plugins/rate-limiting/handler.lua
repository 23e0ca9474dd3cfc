-- rate-limiting with Kong 3.9's behaviour (kong/plugins/rate-limiting/handler.lua and
-- kong/pdk/private/rate_limiting.lua): the usage of every limited period is read first, the
-- X-RateLimit-*-<Period>, RateLimit-* and Retry-After headers follow from it, an exhausted period
-- ends the request, and only then is the request counted (the local policy counts first and takes
-- a refused request back out: the same counts, one shared-dict operation per period).
local policies = require "kong.plugins.rate-limiting.policies"
local timestamp = require "kong.tools.timestamp"
local kong_meta = require "kong.meta"
local EXPIRATION = require "kong.plugins.rate-limiting.expiration"
local unrolled = require "kong.plugins.rate-limiting.unrolled"


local kong = kong
local ngx = ngx
local type = type
local error = error
local ipairs = ipairs
local tostring = tostring
local setmetatable = setmetatable
local floor = math.floor
local resp_header = ngx.header
local get_timestamps = timestamp.get_timestamps
local each_until = unrolled.each_until
local fold = unrolled.fold


local SYNC_RATE_REALTIME = -1
local PERIODS = { "second", "minute", "hour", "day", "month", "year" }

local RATELIMIT_LIMIT     = "RateLimit-Limit"
local RATELIMIT_REMAINING = "RateLimit-Remaining"
local RATELIMIT_RESET     = "RateLimit-Reset"
local RETRY_AFTER         = "Retry-After"


local RateLimitingHandler = {
  VERSION = kong_meta.version,
  PRIORITY = 910,
}


-- Per configuration, once: the limited periods in order (name, limit, window, header names,
-- key suffix), the counter key prefix, and for Redis its db_key and connect options. Weak keys:
-- a new snapshot brings new configuration tables and the old entries go with the old ones.
local derived_by_conf = setmetatable({}, { __mode = "k" })


local function derive(conf)
  local periods = {}
  for _, name in ipairs(PERIODS) do
    local limit = conf[name]
    if type(limit) == "number" then
      local title = name:sub(1, 1):upper() .. name:sub(2)
      periods[#periods + 1] = {
        name = name,
        limit = limit,
        limit_text = tostring(limit),
        window = EXPIRATION[name],
        limit_header = "X-RateLimit-Limit-" .. title,
        remaining_header = "X-RateLimit-Remaining-" .. title,
        key_suffix = ":" .. name,
      }
    end
  end

  local policy = policies[conf.policy]
  if not policy then
    return nil, "rate-limiting: policy '" .. tostring(conf.policy) .. "' is not supported"
  end

  local derived = {
    n = #periods,
    periods = periods,
    policy = policy,
    -- local counts without yielding: one request's keys and counts can live in shared scratch
    -- tables until it is counted; a Redis count yields, so each request has its own.
    yields = conf.policy ~= "local",
    key_prefix = policies.key_prefix(conf),
  }

  if conf.policy == "redis" then
    derived.db_key = policies.db_key(conf)
    derived.sock_opts = policies.sock_opts(conf, derived.db_key)
  end

  derived_by_conf[conf] = derived
  return derived
end


-- The period starts of the current second, as numbers and as the strings counter keys use; every
-- request of a second shares them.
local stamps_second
local stamps = {}
local starts_by_period = {}
local start_texts = {}


local function refresh_stamps(now_ms)
  get_timestamps(now_ms, stamps)
  for i = 1, #PERIODS do
    local name = PERIODS[i]
    starts_by_period[name] = stamps[name]
    start_texts[name] = tostring(stamps[name])
  end
  stamps_second = now_ms
end


local SCRATCH_KEYS = {}
local SCRATCH_STARTS = {}
local SCRATCH_COUNTS = {}


-- The per-period steps, each run for periods 1 to n through kong.plugins.rate-limiting.unrolled.

-- keys[i]: the counter key of period i (policies/init.lua get_local_key); starts[i]: its start.
local function fill_key(i, periods, key_base, keys, starts)
  local period = periods[i]
  local name = period.name
  keys[i] = key_base .. start_texts[name] .. period.key_suffix
  starts[i] = starts_by_period[name]
end


-- The last exhausted period in Kong's iteration order, or 0; which one it is changes no header.
local function find_stop(i, stop, _, periods, counts)
  if periods[i].limit - counts[i] <= 0 then
    return i
  end
  return stop
end


-- Sets X-RateLimit-Limit-<P> and X-RateLimit-Remaining-<P> of period i; returns the period that
-- constrains most so far, and what remains of it (this request counted unless another period
-- stops it): less remaining, or as much over a longer window.
local function period_headers(i, best, best_remaining, periods, counts, stop)
  local period = periods[i]
  local remaining = period.limit - counts[i]
  if stop == 0 or stop == i then
    remaining = remaining - 1
  end
  if remaining < 0 then
    remaining = 0
  end

  resp_header[period.limit_header] = period.limit_text
  resp_header[period.remaining_header] = remaining

  if best == 0 or remaining < best_remaining
     or (remaining == best_remaining and period.window > periods[best].window)
  then
    return i, remaining
  end
  return best, best_remaining
end


-- Kong's client headers: every period's, then RateLimit-* of the most constraining one.
local function set_headers(periods, n, counts, starts, stop, current_timestamp)
  local best, remaining = fold(n, period_headers, 0, 0, periods, counts, stop)

  local period = periods[best]
  local reset = period.window - floor((current_timestamp - starts[best]) / 1000)
  if reset < 1 then
    reset = 1
  end

  resp_header[RATELIMIT_LIMIT] = period.limit_text
  resp_header[RATELIMIT_REMAINING] = remaining
  resp_header[RATELIMIT_RESET] = reset
  if stop ~= 0 then
    resp_header[RETRY_AFTER] = reset
  end
end


local function get_identifier(conf)
  local limit_by = conf.limit_by
  local identifier

  if limit_by == "service" then
    local service = ngx.ctx.service
    identifier = service and service.id

  elseif limit_by == "consumer" then
    local ctx = ngx.ctx
    local entity = ctx.authenticated_consumer or ctx.authenticated_credential
    identifier = entity and entity.id

  elseif limit_by == "credential" then
    local credential = ngx.ctx.authenticated_credential
    identifier = credential and credential.id

  elseif limit_by == "header" then
    identifier = kong.request.get_header(conf.header_name)

  elseif limit_by == "path" then
    local req_path = kong.request.get_path()
    if req_path == conf.path then
      identifier = req_path
    end
  end

  return identifier or ngx.var.remote_addr
end


function RateLimitingHandler:access(conf)
  local derived = derived_by_conf[conf]
  if not derived then
    local err
    derived, err = derive(conf)
    if not derived then
      return error(err)
    end
  end

  -- Kong uses ngx.time(): whole seconds. (ngx.time is read at call time: the test clock patches it.)
  local current_timestamp = ngx.time() * 1000
  if current_timestamp ~= stamps_second then
    refresh_stamps(current_timestamp)
  end

  local identifier = get_identifier(conf)
  local n = derived.n
  local periods = derived.periods

  local keys, starts, counts
  if derived.yields then
    keys, starts, counts = {}, {}, {}
  else
    keys, starts, counts = SCRATCH_KEYS, SCRATCH_STARTS, SCRATCH_COUNTS
  end

  each_until(n, fill_key, periods, derived.key_prefix .. identifier .. ":", keys, starts)

  -- The local policy counts first and takes a refused request back out (policies/init.lua, "Counting
  -- first"); Redis, and a local count that failed, read the usage first and count after, as Kong.
  local policy = derived.policy
  local counted = false
  if policy.count then
    counted = policy.count(conf, derived, keys, starts, counts) == true
  end
  local ok, err = true, nil
  if not counted then
    ok, err = policy.usage(conf, derived, keys, starts, counts)
  end
  if not ok then
    if not conf.fault_tolerant then
      return error(err)
    end

    kong.log.err("failed to get usage: ", tostring(err))

  else
    local stop = fold(n, find_stop, 0, nil, periods, counts)

    if not conf.hide_client_headers then
      set_headers(periods, n, counts, starts, stop, current_timestamp)
    end

    if stop ~= 0 then
      if counted then
        policy.uncount(conf, derived, keys)
      end
      return kong.response.error(conf.error_code, conf.error_message)
    end
  end

  if counted then
    policy.complete(conf, derived, keys)
    return
  end

  -- Kong counts from a zero-delay timer (local) or inline (batched Redis) once the check is done;
  -- the shared dict's incr does not yield, so the local count is made here, as soon.
  if conf.sync_rate ~= SYNC_RATE_REALTIME or conf.policy ~= "redis" then
    policy.increment(conf, derived, keys, starts, 1)
  end
end


return RateLimitingHandler
