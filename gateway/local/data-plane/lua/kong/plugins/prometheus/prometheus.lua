-- The metrics library of Kong 3.9.3's prometheus plugin (kong/plugins/prometheus/prometheus.lua,
-- itself nginx-lua-prometheus), with its API and storage: one shared dict holds every series of
-- every worker, keyed by the series' full text (`name{label="value",...}`); counters and
-- histograms are added to per worker (resty.counter) and synced to the dict every second;
-- gauges are set in the dict, or kept per worker with LOCAL_STORAGE. The exposition sorts the
-- keys, so each family's series stay together and a histogram's buckets in order: `le` is
-- stored zero-padded ("0025.0") with "Inf" for +Inf, and printed as Prometheus wants it.
local resty_counter = require "resty.counter"
local buffer = require "string.buffer"
local new_tab = require "table.new"

local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local INFO = ngx.INFO
local get_phase = ngx.get_phase
local sleep = ngx.sleep
local timer_every = ngx.timer.every
local type = type
local error = error
local pairs = pairs
local tostring = tostring
local tonumber = tonumber
local setmetatable = setmetatable
local byte = string.byte
local sub = string.sub
local find = string.find
local fmt = string.format
local gsub = string.gsub
local concat = table.concat
local sort = table.sort
local max = math.max
local ceil = math.ceil
local floor = math.floor

local Prometheus = {}
local mt = { __index = Prometheus }

local TYPE_COUNTER = 1
local TYPE_GAUGE = 2
local TYPE_HISTOGRAM = 4
local TYPE_NAMES = { [TYPE_COUNTER] = "counter", [TYPE_GAUGE] = "gauge", [TYPE_HISTOGRAM] = "histogram" }

local DEFAULT_ERROR_METRIC_NAME = "nginx_metric_errors_total"
local DEFAULT_SYNC_INTERVAL = 1
local DEFAULT_BUCKETS = { 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 10 }

-- lines written to the response at a time, and keys read between two yields of a long scrape
local LINES_PER_WRITE = 100
local KEYS_PER_YIELD = 1000

local METRIC_NAME = "^[a-zA-Z_:][a-zA-Z0-9_:]*$"
local LABEL_NAME = "^[a-zA-Z_][a-zA-Z0-9_]*$"

-- the key under which a leaf of a metric's label tree keeps the series' full name(s)
local LEAF = mt

Prometheus.LOCAL_STORAGE = true

--- The first byte of `s` that does not start a valid UTF-8 sequence (Unicode 6.2, table 3-7),
-- or nil when all of it is valid.
local function invalid_utf8_at(s)
  local i, n = 1, #s
  while i <= n do
    local c = byte(s, i)
    if c >= 0x80 then
      local size, lo, hi
      if c >= 0xC2 and c <= 0xDF then
        size, lo, hi = 1, 0x80, 0xBF
      elseif c >= 0xE0 and c <= 0xEF then
        size = 2
        lo, hi = (c == 0xE0) and 0xA0 or 0x80, (c == 0xED) and 0x9F or 0xBF
      elseif c >= 0xF0 and c <= 0xF4 then
        size = 3
        lo, hi = (c == 0xF0) and 0x90 or 0x80, (c == 0xF4) and 0x8F or 0xBF
      else
        return i
      end
      if i + size > n then
        return i
      end
      for j = 1, size do
        local b = byte(s, i + j)
        if b < lo or b > hi then
          return i
        end
        lo, hi = 0x80, 0xBF
      end
      i = i + size
    end
    i = i + 1
  end
  return nil
end

local ESCAPES = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }

--- A label value as the exposition format wants it: invalid UTF-8 cut off (as Kong does),
-- backslash, double quote and line feed escaped.
local function label_value(value)
  if type(value) ~= "string" then
    return tostring(value)
  end
  local bad = invalid_utf8_at(value)
  if bad then
    value = sub(value, 1, bad - 1)
  end
  if find(value, '[\\"\n]') then
    value = gsub(value, '[\\"\n]', ESCAPES)
  end
  return value
end

--- `{k1="v1",k2="v2"` (no closing brace) for the label names and values.
local function labels_text(label_names, label_values)
  local parts = new_tab(#label_names, 0)
  for i = 1, #label_names do
    parts[i] = label_names[i] .. '="' .. label_value(label_values[i]) .. '"'
  end
  return "{" .. concat(parts, ",")
end

--- The sprintf format of a histogram's `le` values in the dict: as many integer and decimal
-- digits as the widest bound, so that sorting the keys as text sorts the buckets by value.
local function bucket_format(buckets)
  local int_digits, decimals = 1, 1
  for i = 1, #buckets do
    local bound = buckets[i]
    if type(bound) ~= "number" then
      error("bucket boundaries should be numeric", 3)
    end
    local text = gsub(fmt("%f", bound), "0*$", "")
    local dot = find(text, ".", 1, true)
    int_digits = max(int_digits, dot - 1)
    decimals = max(decimals, #text - dot)
  end
  return "%0" .. (int_digits + decimals + 1) .. "." .. decimals .. "f"
end

-- Whole-number bounds up to this (Kong's latency buckets, in ms): a value's bucket is read from a
-- table by the value rounded up, not found by a loop, whose exit varies with the value (a
-- request's latencies), so that a trace through the log phase does not branch there.
local SLOT_TABLE_MAX = 1000

--- slot_of[v]: the first bucket whose bound is at least v, for v = 0 .. SLOT_TABLE_MAX (n + 1 when
-- none is); nil when a bound is not a whole number (v <= bound is then not ceil(v) <= bound).
local function slots_by_integer(buckets)
  for i = 1, #buckets do
    if buckets[i] ~= floor(buckets[i]) then
      return nil
    end
  end
  local slot_of = new_tab(SLOT_TABLE_MAX + 1, 0)
  local slot = 1
  for v = 0, SLOT_TABLE_MAX do
    while slot <= #buckets and v > buckets[slot] do
      slot = slot + 1
    end
    slot_of[v] = slot
  end
  return slot_of
end

-- a label tree's node for one more label value
local function child(t, value)
  local next_t = t[value]
  if not next_t then
    next_t = {}
    t[value] = next_t
  end
  return next_t
end

--- The series name(s) of a metric for these label values, built once and kept in the metric's
-- label tree. A histogram has a list: _count, _sum, then one _bucket per bound and Inf.
local function lookup_or_create(self, label_values)
  local count = self.label_count
  local t = self.lookup
  if count > 0 then
    if type(label_values) ~= "table" or #label_values ~= count or label_values[1] == nil then
      return nil, fmt("metric '%s' has inconsistent labels count, expected %d, got %d",
                      self.name, count, type(label_values) == "table" and #label_values or 0)
    end
    -- the first levels as straight-line code: a loop per metric call left the log handler's trace
    -- at LuaJIT's loop unroll limit (six metrics a request, two to six labels each)
    t = child(t, label_values[1])
    if count > 1 then
      t = child(t, label_values[2])
      if count > 2 then
        t = child(t, label_values[3])
        if count > 3 then
          t = child(t, label_values[4])
          if count > 4 then
            t = child(t, label_values[5])
            if count > 5 then
              t = child(t, label_values[6])
              for i = 7, count do
                t = child(t, label_values[i])
              end
            end
          end
        end
      end
    end
  elseif label_values ~= nil and (type(label_values) ~= "table" or #label_values > 0) then
    return nil, fmt("metric '%s' has inconsistent labels count, expected 0, got %d",
                    self.name, type(label_values) == "table" and #label_values or 1)
  end

  local full = t[LEAF]
  if full then
    return full
  end

  local labels = count > 0 and labels_text(self.label_names, label_values) or nil
  if self.typ == TYPE_HISTOGRAM then
    local closed = labels and labels .. "}" or ""
    local bucket_prefix = self.name .. "_bucket" .. (labels and labels .. "," or "{")
    full = { self.name .. "_count" .. closed, self.name .. "_sum" .. closed }
    local buckets = self.buckets
    for i = 1, #buckets do
      full[i + 2] = bucket_prefix .. 'le="' .. fmt(self.bucket_format, buckets[i]) .. '"}'
    end
    full[#buckets + 3] = bucket_prefix .. 'le="Inf"}'
  else
    full = labels and (self.name .. labels .. "}") or self.name
  end
  t[LEAF] = full
  return full
end

local function counter_of(self)
  local c = self.parent._counter
  if not c then
    self.parent:log_error("counter not initialized! Have you called Prometheus:init() from the ",
                          "init_worker_by_lua_block nginx phase?")
  end
  return c
end

--- counter:inc(value, label_values): adds to this worker's counter (synced every second).
local function inc_counter(self, value, label_values)
  if value and value < 0 then
    return self.parent:log_error_kv(self.name, value, "Value should not be negative")
  end
  local key, err = lookup_or_create(self, label_values)
  if not key then
    return self.parent:log_error(err)
  end
  local c = counter_of(self)
  if c then
    c:incr(key, value or 1)
  end
end

--- gauge:inc(value, label_values): straight into the dict (or this worker's table), so that
-- inc and set keep their order.
local function inc_gauge(self, value, label_values)
  local key, err = lookup_or_create(self, label_values)
  if not key then
    return self.parent:log_error(err)
  end
  if self.local_storage then
    local metrics = self.parent.local_metrics
    metrics[key] = (metrics[key] or 0) + value
    return
  end
  local _, incr_err = self.parent.dict:incr(key, value, 0)
  if incr_err then
    self.parent:log_error_kv(key, value, incr_err)
  end
end

local function set(self, value, label_values)
  if not value then
    return self.parent:log_error("No value passed for " .. self.name)
  end
  local key, err = lookup_or_create(self, label_values)
  if not key then
    return self.parent:log_error(err)
  end
  if self.local_storage then
    self.parent.local_metrics[key] = value
    return
  end
  local _, set_err = self.parent.dict:safe_set(key, value)
  if set_err then
    self.parent:log_error_kv(key, value, set_err)
  end
end

--- histogram:observe(value, label_values): Kong's library adds 1 to _count, the value to _sum
-- and 1 to every bucket whose bound the value does not exceed, then +Inf, ~20 counter additions
-- per observation. Here the observation lands in its one bucket of a per-worker array, and the
-- sync (flush_histograms) adds the cumulative counts: the same series and values reach the dict,
-- a bucket's series still appearing only once a value fits in it.
local function observe(self, value, label_values)
  if not value then
    return self.parent:log_error("No value passed for " .. self.name)
  end
  local keys, err = lookup_or_create(self, label_values)
  if not keys then
    return self.parent:log_error(err)
  end
  local buckets = self.buckets
  local n = self.bucket_count
  local pending = self.parent._pending_histograms
  local counts = pending[keys]
  if not counts then
    counts = new_tab(n + 2, 0)
    for i = 1, n + 2 do
      counts[i] = 0
    end
    pending[keys] = counts
  end
  local slot
  local slot_of = self.slot_of
  if slot_of and value >= 0 and value <= SLOT_TABLE_MAX then
    slot = slot_of[ceil(value)]
  else
    slot = n + 1
    for i = 1, n do
      if value <= buckets[i] then
        slot = i
        break
      end
    end
  end
  counts[slot] = counts[slot] + 1
  counts[n + 2] = counts[n + 2] + value
end

--- Adds this worker's pending observations to its counter: each bucket gets every observation
-- at or below its bound, +Inf and _count all of them, _sum their total.
local function flush_histograms(self)
  local c = self._counter
  for keys, counts in pairs(self._pending_histograms) do
    local n = #keys - 3
    local running = 0
    for i = 1, n do
      running = running + counts[i]
      if running > 0 then
        c:incr(keys[i + 2], running)
      end
    end
    running = running + counts[n + 1]
    if running > 0 then
      c:incr(keys[n + 3], running)
      c:incr(keys[1], running)
      c:incr(keys[2], counts[n + 2])
      for i = 1, n + 2 do
        counts[i] = 0
      end
    end
  end
end

--- Removes one series. Counters wait a sync interval first, so that no worker syncs it back.
local function del(self, label_values)
  local key, err = lookup_or_create(self, label_values)
  if not key then
    return self.parent:log_error(err)
  end
  if self.typ ~= TYPE_GAUGE then
    log(INFO, "waiting ", self.parent.sync_interval, "s for counter to sync")
    sleep(self.parent.sync_interval)
  end
  if self.local_storage then
    self.parent.local_metrics[key] = nil
    return
  end
  local _, del_err = self.parent.dict:delete(key)
  if del_err then
    self.parent:log_error("Error deleting key: ", key, ": ", del_err)
  end
end

--- The dict key prefixes of a metric's series.
local function series_prefixes(self)
  if self.typ == TYPE_HISTOGRAM then
    return { self.name .. "_count", self.name .. "_sum", self.name .. "_bucket{" }
  end
  return { self.name .. "{" }
end

--- Removes every series of the metric.
local function reset(self)
  if self.typ ~= TYPE_GAUGE then
    log(INFO, "waiting ", self.parent.sync_interval, "s for counter to sync")
    sleep(self.parent.sync_interval)
  end
  local prefixes = series_prefixes(self)
  local dict = self.parent.dict
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local key = keys[i]
    local remove = key == self.name
    for j = 1, #prefixes do
      local prefix = prefixes[j]
      if sub(key, 1, #prefix) == prefix then
        remove = true
        break
      end
    end
    if remove then
      dict:delete(key)
    end
  end
  self.lookup = {}
end

local function reset_local(self)
  local prefix = self.name .. "{"
  local metrics = self.parent.local_metrics
  for key in pairs(metrics) do
    if key == self.name or sub(key, 1, #prefix) == prefix then
      metrics[key] = nil
    end
  end
  self.lookup = {}
end

local function check_names(name, label_names)
  if type(name) ~= "string" or not find(name, METRIC_NAME) then
    return "Metric name '" .. tostring(name) .. "' is invalid"
  end
  if label_names == nil then
    return nil
  end
  if type(label_names) ~= "table" then
    return "Metric '" .. name .. "' label names must be a list"
  end
  for i = 1, #label_names do
    local label = label_names[i]
    if label == "le" then
      return "Invalid label name 'le' in " .. name
    end
    if type(label) ~= "string" or not find(label, LABEL_NAME) then
      return "Metric '" .. name .. "' label name '" .. tostring(label) .. "' is invalid"
    end
  end
  return nil
end

--- Strips the histogram suffix a name may carry, so that `x` and `x_count` collide.
local function family_of(name)
  return (gsub(gsub(gsub(name, "_bucket$", ""), "_count$", ""), "_sum$", ""))
end

local function register(self, name, help, label_names, buckets, typ, local_storage)
  if not self.initialized then
    log(ERR, "Prometheus module has not been initialized")
    return nil
  end
  local err = check_names(name, label_names)
  if err then
    self:log_error(err)
    return nil
  end
  local registry = self.registry
  local taken
  if typ == TYPE_HISTOGRAM then
    taken = registry[name] or registry[name .. "_count"] or registry[name .. "_sum"] or registry[name .. "_bucket"]
  else
    taken = registry[name] or registry[family_of(name)]
  end
  if taken then
    self:log_error("Duplicate metric " .. name)
    return nil
  end
  if local_storage and typ ~= TYPE_GAUGE then
    log(ERR, "Cannot use local_storage metrics for non Gauge type")
    return nil
  end

  local metric = {
    name = name,
    help = help,
    typ = typ,
    label_names = label_names or {},
    label_count = label_names and #label_names or 0,
    lookup = {},
    parent = self,
    local_storage = local_storage or nil,
    reset = local_storage and reset_local or reset,
  }
  if typ == TYPE_COUNTER then
    metric.inc = inc_counter
    metric.del = del
  elseif typ == TYPE_GAUGE then
    metric.inc = inc_gauge
    metric.set = set
    metric.del = del
  else
    metric.observe = observe
    metric.buckets = buckets or DEFAULT_BUCKETS
    metric.bucket_count = #metric.buckets
    metric.bucket_format = bucket_format(metric.buckets)
    metric.slot_of = slots_by_integer(metric.buckets)
  end
  registry[name] = metric
  return metric
end

--- Prometheus.init(dict_name, prefix or { prefix, error_metric_name, sync_interval }), in init,
-- init_worker or a timer.
function Prometheus.init(dict_name, options_or_prefix)
  local phase = get_phase()
  if phase ~= "init" and phase ~= "init_worker" and phase ~= "timer" then
    error("Prometheus.init can only be called from init_by_lua_block, init_worker_by_lua_block or timer", 2)
  end
  dict_name = dict_name or "prometheus_metrics"
  local dict = ngx.shared[dict_name]
  if not dict then
    error("Dictionary '" .. dict_name .. "' does not seem to exist. Please define the dictionary using `lua_shared_dict`.", 2)
  end
  local options = type(options_or_prefix) == "table" and options_or_prefix or { prefix = options_or_prefix }
  local self = setmetatable({
    dict_name = dict_name,
    dict = dict,
    prefix = options.prefix or "",
    error_metric_name = options.error_metric_name or DEFAULT_ERROR_METRIC_NAME,
    sync_interval = options.sync_interval or DEFAULT_SYNC_INTERVAL,
    registry = {},
    local_metrics = {},
    -- this worker's observations not yet synced: series' key list -> counts per bucket, +Inf, sum
    _pending_histograms = {},
    initialized = true,
  }, mt)
  self:counter(self.error_metric_name, "Number of nginx-lua-prometheus errors")
  dict:set(self.error_metric_name, 0)
  if phase == "init_worker" then
    self:init_worker(self.sync_interval)
  end
  return self
end

--- Starts this worker's counter (init_worker), synced every `sync_interval` seconds, and once
-- more when the worker exits.
function Prometheus:init_worker(sync_interval)
  if get_phase() ~= "init_worker" then
    error("Prometheus:init_worker can only be called in init_worker_by_lua_block", 2)
  end
  if self._counter then
    log(ngx.WARN, "init_worker() has been called twice. Please do not explicitly call init_worker. ",
                  "Instead, call Prometheus:init() in the init_worker_by_lua_block")
    return
  end
  self.sync_interval = sync_interval or DEFAULT_SYNC_INTERVAL
  local dict, error_metric = self.dict, self.error_metric_name
  local counter, err = resty_counter.new(self.dict_name, nil, function(failures)
    dict:incr(error_metric, failures, 0)
  end)
  if not counter then
    error(err, 2)
  end
  self._counter = counter
  local ok, timer_err = timer_every(self.sync_interval, function()
    self:sync()
  end)
  if not ok then
    error("could not start the metrics sync timer: " .. tostring(timer_err), 2)
  end
end

--- Adds what this worker counted to the shared dict.
function Prometheus:sync()
  local c = self._counter
  if c then
    flush_histograms(self)
    c:sync()
  end
end

function Prometheus:counter(name, help, label_names)
  return register(self, name, help, label_names, nil, TYPE_COUNTER)
end

function Prometheus:gauge(name, help, label_names, local_storage)
  return register(self, name, help, label_names, nil, TYPE_GAUGE, local_storage)
end

function Prometheus:histogram(name, help, label_names, buckets)
  return register(self, name, help, label_names, buckets, TYPE_HISTOGRAM)
end

--- The family a dict key belongs to: its name without labels, and without _bucket for a
-- histogram's bucket (the _count and _sum series sort after it).
local function short_name(key)
  local brace = find(key, "{", 1, true)
  if not brace then
    return key
  end
  local bucket = find(key, "_bucket{", 1, true)
  if bucket and find(key, "le=", brace + 1, true) then
    return sub(key, 1, bucket - 1)
  end
  return sub(key, 1, brace - 1)
end

--- A stored bucket key as exposed: le="0025.0" -> le="25", le="Inf" -> le="+Inf".
local function exposed_key(key)
  local at = find(key, ',le="', 1, true) or find(key, '{le="', 1, true)
  if not at then
    return key
  end
  local from = at + 5
  local to = find(key, '"', from, true)
  local bound = sub(key, from, to - 1)
  if bound == "Inf" then
    bound = "+Inf"
  else
    bound = tostring(tonumber(bound))
  end
  return sub(key, 1, from - 1) .. bound .. sub(key, to)
end

--- Writes every series (sorted, each family after its # HELP and # TYPE) through `write_fn`
-- (ngx.print by default). `local_only` leaves out what the dict holds: the per-worker gauges only.
function Prometheus:metric_data(write_fn, local_only)
  if not self.initialized then
    log(ERR, "Prometheus module has not been initialized")
    return
  end
  write_fn = write_fn or ngx.print

  -- what this worker counted is in the output at once; other workers' within a sync interval
  self:sync()

  local keys = local_only and {} or self.dict:get_keys(0)
  local count = #keys
  local local_metrics = self.local_metrics
  for key in pairs(local_metrics) do
    count = count + 1
    keys[count] = key
  end
  sort(keys)

  local phase = get_phase()
  local can_yield = phase == "content" or phase == "timer" or phase == "access" or phase == "rewrite"
  local prefix = self.prefix
  local registry = self.registry
  local seen = {}
  local out = buffer.new(4096)
  local lines = 0
  for i = 1, count do
    if can_yield and i % KEYS_PER_YIELD == 0 then
      sleep(0)
    end
    local key = keys[i]
    local value = local_metrics[key]
    local is_local = value ~= nil
    if not is_local then
      local err
      value, err = self.dict:get(key)
      if value == nil then
        if err then
          self:log_error("Error getting '", key, "': ", err)
        end
        goto continue
      end
    end

    do
      local family = short_name(key)
      if not seen[family] then
        seen[family] = true
        local metric = registry[family]
        if metric then
          if metric.help then
            out:put("# HELP ", prefix, family, " ", metric.help, "\n")
          end
          out:put("# TYPE ", prefix, family, " ", TYPE_NAMES[metric.typ], "\n")
        end
      end
      out:put(prefix, is_local and key or exposed_key(key), " ", tostring(value), "\n")
      lines = lines + 1
      if lines >= LINES_PER_WRITE then
        write_fn(out:get())
        lines = 0
      end
    end

    ::continue::
  end
  if #out > 0 then
    write_fn(out:get())
  end
  out:free()
end

--- The exposition as a response body.
function Prometheus:collect()
  ngx.header["Content-Type"] = "text/plain"
  self:metric_data()
end

--- Logs an error and counts it in nginx_metric_errors_total.
function Prometheus:log_error(...)
  log(ERR, ...)
  self.dict:incr(self.error_metric_name, 1, 0)
end

function Prometheus:log_error_kv(key, value, err)
  self:log_error("Error while setting '", key, "' to '", value, "': '", err, "'")
end

return Prometheus
