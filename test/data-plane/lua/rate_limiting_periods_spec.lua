-- rate-limiting's per-period work on every combination of periods. The handler and the local
-- policy run their per-period steps through generated straight-line loops
-- (kong.plugins.rate-limiting.unrolled); these specs check the loops against plain `for` loops,
-- and the handler against a looped reference written from Kong 3.9.3's
-- kong/plugins/rate-limiting/handler.lua (HANDLER:<line>): get_usage (:90-113) and access
-- (:130-215). Runs in init, without a request: ngx.header, ngx.time, the counters' shared dict
-- and the `kong` global are stand-ins while the handler is loaded and run.
local unrolled = require "kong.plugins.rate-limiting.unrolled"
local timestamp = require "kong.tools.timestamp"
local EXPIRATION = require "kong.plugins.rate-limiting.expiration"

local HANDLER = "kong/plugins/rate-limiting/handler.lua"
local PERIODS = { "second", "minute", "hour", "day", "month", "year" }
local TITLES = { second = "Second", minute = "Minute", hour = "Hour", day = "Day", month = "Month", year = "Year" }
-- 2025-11-27T08:20:34Z: inside every period, so that each RateLimit-Reset differs
local NOW_S = 1764231634

--- Every non-empty subset of the six periods, in their order (63).
local function combinations()
  local all = {}
  for mask = 1, 63 do
    local names = {}
    for bit = 1, 6 do
      if math.floor(mask / 2 ^ (bit - 1)) % 2 == 1 then
        names[#names + 1] = PERIODS[bit]
      end
    end
    all[#all + 1] = names
  end
  return all
end

describe("kong.plugins.rate-limiting.unrolled", function()
  it("each_until(n, step, ...) runs step(i, a, b, c, d) for i = 1..n in order, as a for loop does", function()
    for n = 1, unrolled.MAX_PERIODS do
      local seen = {}
      local result = unrolled.each_until(n, function(i, a, b, c, d)
        seen[#seen + 1] = { i, a, b, c, d }
      end, "a", "b", "c", "d")
      assert.is_nil(result)
      local expected = {}
      for i = 1, n do
        expected[i] = { i, "a", "b", "c", "d" }
      end
      assert.same(expected, seen)
    end
  end)

  it("each_until(n, step, ...) stops at the first step that returns a value, and returns it", function()
    for n = 1, unrolled.MAX_PERIODS do
      for failing = 1, n do
        local calls = 0
        local result = unrolled.each_until(n, function(i)
          calls = calls + 1
          if i >= failing then
            return "failed at " .. i
          end
        end)
        assert.equal("failed at " .. failing, result)
        assert.equal(failing, calls)
      end
    end
  end)

  it("fold(n, step, x, y, ...) threads x and y through step(i, x, y, a, b, c, d) for i = 1..n, as a for loop does", function()
    local function step(i, x, y, a, b, c, d)
      return x .. i .. a, y + i * b + c - d
    end
    for n = 1, unrolled.MAX_PERIODS do
      local x, y = "", 0
      for i = 1, n do
        x, y = step(i, x, y, "|", 10, 3, 1)
      end
      local ux, uy = unrolled.fold(n, step, "", 0, "|", 10, 3, 1)
      assert.equal(x, ux)
      assert.equal(y, uy)
    end
  end)

  it("goes as far as there are periods", function()
    assert.equal(#PERIODS, unrolled.MAX_PERIODS)
  end)
end)

--- The looped reference: the headers Kong sets and whether it stops, for limits and counts by
-- period (HANDLER:90-113 get_usage, HANDLER:154-200).
local function reference(conf, counts, now_ms)
  local usage, stop = {}, nil
  for _, name in ipairs(PERIODS) do
    local limit = conf[name]
    if limit then
      local remaining = limit - (counts[name] or 0)
      usage[name] = { limit = limit, remaining = remaining }
      if remaining <= 0 then
        stop = name
      end
    end
  end

  local headers = {}
  if not conf.hide_client_headers then
    local stamps = timestamp.get_timestamps(now_ms)
    local limit, window, remaining, reset
    for name, v in pairs(usage) do
      local current_remaining = v.remaining
      if stop == nil or stop == name then
        current_remaining = current_remaining - 1
      end
      current_remaining = math.max(0, current_remaining)
      local current_window = EXPIRATION[name]
      if not limit or current_remaining < remaining
         or (current_remaining == remaining and current_window > window)
      then
        limit, window, remaining = v.limit, current_window, current_remaining
        reset = math.max(1, window - math.floor((now_ms - stamps[name]) / 1000))
      end
      headers["X-RateLimit-Limit-" .. TITLES[name]] = tostring(v.limit)
      headers["X-RateLimit-Remaining-" .. TITLES[name]] = tostring(current_remaining)
    end
    headers["RateLimit-Limit"] = tostring(limit)
    headers["RateLimit-Remaining"] = tostring(remaining)
    headers["RateLimit-Reset"] = tostring(reset)
    if stop then
      headers["Retry-After"] = tostring(reset)
    end
  end
  return headers, stop ~= nil
end

describe("rate-limiting on every combination of periods, against a looped reference (" .. HANDLER .. ")", function()
  local saved = {}
  local handler
  local headers = {}
  local counters = {}    -- the counts the policy reads, by period
  local increments = {}  -- what the policy added, by period
  local failing          -- the error the counters' dict returns, when set
  local exits = {}
  local logged = {}

  -- the counters' shared dict: a count per period, by the key's last part; incr as ngx.shared's
  -- (without init a missing key is "not found"). A failing dict fails every operation, as a real
  -- one does for a key it refuses (too long): reads and counts alike.
  local shm = {}
  function shm:get(key)
    if failing then
      return nil, failing
    end
    return counters[key:match(":(%a+)$")]
  end
  function shm:incr(key, value, init)
    if failing then
      return nil, failing
    end
    local name = key:match(":(%a+)$")
    local current = counters[name]
    if current == nil then
      if init == nil then
        return nil, "not found"
      end
      current = init
    end
    counters[name] = current + value
    local added = (increments[name] or 0) + value
    increments[name] = added ~= 0 and added or nil
    return counters[name]
  end

  setup(function()
    saved.header, saved.time = ngx.header, ngx.time
    saved.shm, saved.kong = ngx.shared.kong_rate_limiting_counters, rawget(_G, "kong")
    ngx.header = setmetatable({}, { __newindex = function(_, name, value) headers[name] = tostring(value) end })
    ngx.time = function() return NOW_S end
    ngx.shared.kong_rate_limiting_counters = shm
    _G.kong = {
      request = { get_header = function() return "client-a" end },
      response = { error = function(status, message) exits[#exits + 1] = { status, message } end },
      log = { err = function(...) logged[#logged + 1] = table.concat({ ... }) end },
    }
    package.loaded["kong.plugins.rate-limiting.policies"] = nil
    package.loaded["kong.plugins.rate-limiting.handler"] = nil
    handler = require "kong.plugins.rate-limiting.handler"
  end)

  teardown(function()
    ngx.header, ngx.time = saved.header, saved.time
    ngx.shared.kong_rate_limiting_counters, _G.kong = saved.shm, saved.kong
    -- the modules hold the stand-ins: a later require loads them afresh
    package.loaded["kong.plugins.rate-limiting.policies"] = nil
    package.loaded["kong.plugins.rate-limiting.handler"] = nil
  end)

  local function new_conf(names, limits, options)
    local conf = { policy = "local", limit_by = "header", header_name = "x-client", fault_tolerant = true,
                   sync_rate = -1, error_code = 429, error_message = "API rate limit exceeded",
                   hide_client_headers = false }
    for _, name in ipairs(names) do
      conf[name] = limits[name]
    end
    for key, value in pairs(options or {}) do
      conf[key] = value
    end
    return conf
  end

  --- Runs access once on fresh stand-ins; what it set, and whether it stopped the request.
  local function run(conf, counts)
    for k in pairs(headers) do headers[k] = nil end
    for k in pairs(counters) do counters[k] = nil end
    for k in pairs(increments) do increments[k] = nil end
    for k in pairs(exits) do exits[k] = nil end
    for name, count in pairs(counts) do counters[name] = count end
    handler:access(conf)
    return headers, #exits > 0
  end

  local function label(names, counts)
    local parts = {}
    for _, name in ipairs(names) do
      parts[#parts + 1] = name .. "=" .. tostring(counts[name] or 0)
    end
    return table.concat(parts, ",")
  end

  -- distinct limits, and equal ones: ties in what remains go to the longer window (HANDLER:170)
  local LIMIT_SETS = {
    { second = 5, minute = 7, hour = 3, day = 11, month = 13, year = 2 },
    { second = 10, minute = 10, hour = 10, day = 10, month = 10, year = 10 },
  }

  it("under every limit: every header, and each period counted once", function()
    for _, names in ipairs(combinations()) do
      for _, limits in ipairs(LIMIT_SETS) do
        for _, used in ipairs({ 0, 1 }) do
          local counts = {}
          for _, name in ipairs(names) do
            counts[name] = math.min(used, limits[name] - 1)
          end
          local conf = new_conf(names, limits)
          local expected, expected_stop = reference(conf, counts, NOW_S * 1000)
          local got, stopped = run(conf, counts)
          local case = label(names, counts)
          assert.is_false(expected_stop, case)
          assert.is_false(stopped, case)
          assert.same(expected, got, case)
          local counted = {}
          for _, name in ipairs(names) do counted[name] = 1 end
          assert.same(counted, increments, case)
        end
      end
    end
  end)

  it("a period at or over its limit: 429, Retry-After, the same headers, nothing counted", function()
    for _, names in ipairs(combinations()) do
      for _, limits in ipairs(LIMIT_SETS) do
        for _, exhausted in ipairs(names) do
          for _, over in ipairs({ 0, 3 }) do
            local counts = {}
            for i, name in ipairs(names) do
              counts[name] = (i % 2 == 0) and limits[name] - 2 or 0
            end
            counts[exhausted] = limits[exhausted] + over
            local conf = new_conf(names, limits)
            local expected = reference(conf, counts, NOW_S * 1000)
            local got, stopped = run(conf, counts)
            local case = label(names, counts)
            assert.is_true(stopped, case)
            assert.same({ 429, "API rate limit exceeded" }, exits[1], case)
            assert.same(expected, got, case)
            assert.same({}, increments, case)
          end
        end
      end
    end
  end)

  it("every period at its limit: all remaining 0 (HANDLER:160-166)", function()
    for _, names in ipairs(combinations()) do
      local limits = LIMIT_SETS[1]
      local counts = {}
      for _, name in ipairs(names) do counts[name] = limits[name] end
      local conf = new_conf(names, limits)
      local expected = reference(conf, counts, NOW_S * 1000)
      local got, stopped = run(conf, counts)
      assert.is_true(stopped)
      assert.same(expected, got, label(names, counts))
      for _, name in ipairs(names) do
        assert.equal("0", got["X-RateLimit-Remaining-" .. TITLES[name]])
      end
    end
  end)

  it("hide_client_headers: no header, the same decision and counts (HANDLER:156, :197)", function()
    for _, names in ipairs(combinations()) do
      local limits = LIMIT_SETS[1]
      local conf = new_conf(names, limits, { hide_client_headers = true })
      local got, stopped = run(conf, {})
      assert.same({}, got)
      assert.is_false(stopped)
      local counts = { [names[#names]] = limits[names[#names]] }
      got, stopped = run(conf, counts)
      assert.same({}, got)
      assert.is_true(stopped, label(names, counts))
    end
  end)

  it("the counters cannot be used: fault_tolerant lets the request through without headers, otherwise it fails (HANDLER:143-150, :208-216)", function()
    for _, names in ipairs(combinations()) do
      local limits = LIMIT_SETS[1]
      failing = "key too long"
      for k in pairs(logged) do logged[k] = nil end
      local ok, got, stopped = pcall(run, new_conf(names, limits), {})
      failing = nil
      assert.is_true(ok, got)
      assert.same({}, got)
      assert.is_false(stopped)
      assert.same({}, increments)
      -- Kong's two logs: the usage not read, then its increment failing (policies/init.lua:310)
      assert.matches("failed to get usage: key too long", logged[#logged - 1], 1, true)
      assert.matches("could not increment counter for period '" .. names[1] .. "': key too long", logged[#logged], 1, true)

      failing = "key too long"
      local err
      ok, err = pcall(run, new_conf(names, limits, { fault_tolerant = false }), {})
      failing = nil
      assert.is_false(ok)
      assert.matches("key too long", tostring(err), 1, true)
      assert.same({}, increments)
    end
  end)

  it("counts under Kong's local key: ratelimit:<route>:<service>:<identifier>:<period start>:<period> (policies/init.lua:56-62)", function()
    local keys = {}
    local incr = shm.incr
    shm.incr = function(self, key, value, init, ...)
      -- the keys the request is counted under: made with init (the first count of a period)
      if init ~= nil then
        keys[#keys + 1] = key
      end
      return incr(self, key, value, init, ...)
    end
    run(new_conf({ "minute", "day" }, LIMIT_SETS[1]), {})
    shm.incr = incr
    local stamps = timestamp.get_timestamps(NOW_S * 1000)
    local empty = "00000000-0000-0000-0000-000000000000"
    assert.same({
      "ratelimit:" .. empty .. ":" .. empty .. ":client-a:" .. stamps.minute .. ":minute",
      "ratelimit:" .. empty .. ":" .. empty .. ":client-a:" .. stamps.day .. ":day",
    }, keys)
  end)
end)
