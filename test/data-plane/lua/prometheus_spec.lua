-- The prometheus plugin's metrics library (kong.plugins.prometheus.prometheus), as Kong 3.9.3's
-- spec/03-plugins/26-prometheus/08-unit_spec.lua checks it (SPEC:<line>), plus the exposition's
-- order and formats (kong/plugins/prometheus/prometheus.lua's header comment). Runs in init, so
-- each instance gets a counter without a sync timer (init_worker would start one).
local prometheus = require "kong.plugins.prometheus.prometheus"
local resty_counter = require "resty.counter"

local SPEC = "spec/03-plugins/26-prometheus/08-unit_spec.lua"

local function new_instance()
  ngx.shared.prometheus_metrics:flush_all()
  local prom = prometheus.init("prometheus_metrics", "kong_")
  prom._counter = assert(resty_counter.new("prometheus_metrics", nil, function(n)
    ngx.shared.prometheus_metrics:incr(prom.error_metric_name, n, 0)
  end))
  return prom
end

local function exposition(prom, local_only)
  local parts = {}
  prom:metric_data(function(text) parts[#parts + 1] = text end, local_only)
  return table.concat(parts)
end

describe("kong.plugins.prometheus.prometheus", function()
  it("check metric names (" .. SPEC .. ":28)", function()
    local prom = new_instance()
    assert.truthy(prom:counter("mem_used"))
    assert.truthy(prom:counter("Mem_Used"))
    assert.truthy(prom:counter(":mem_used"))
    assert.truthy(prom:counter("mem_used:"))
    assert.truthy(prom:counter("_mem_used_"))
    assert.falsy(prom:counter("mem-used"))
    assert.falsy(prom:counter("0name"))
    assert.falsy(prom:counter("name$"))
  end)

  it("check metric label names (" .. SPEC .. ":57)", function()
    local prom = new_instance()
    assert.truthy(prom:counter("mem0", nil, { "LUA" }))
    assert.truthy(prom:counter("mem1", nil, { "lua" }))
    assert.truthy(prom:counter("mem2", nil, { "_lua_" }))
    assert.falsy(prom:counter("mem3", nil, { ":lua" }))
    assert.falsy(prom:counter("mem4", nil, { "0lua" }))
    assert.falsy(prom:counter("mem5", nil, { "lua*" }))
    assert.falsy(prom:counter("mem6", nil, { "lua\\5.1" }))
    assert.falsy(prom:counter("mem7", nil, { "lua\"5.1\"" }))
    assert.falsy(prom:counter("mem8", nil, { "lua-vm" }))
    assert.falsy(prom:histogram("mem9", nil, { "le" }))
  end)

  it("check metric full name (" .. SPEC .. ":89)", function()
    local prom = new_instance()
    local shm = ngx.shared.prometheus_metrics
    prom:counter("mem", nil, { "lua" }):inc(1, { "2.1" })
    prom:counter("file", nil, { "path" }):inc(1, { "\\root" })
    prom:counter("user", nil, { "name" }):inc(1, { "\"quote" })
    prom._counter:sync()
    assert.equal(1, shm:get([[mem{lua="2.1"}]]))
    assert.equal(1, shm:get([[file{path="\\root"}]]))
    assert.equal(1, shm:get([[user{name="\"quote"}]]))
  end)

  it("emit metric data (" .. SPEC .. ":114)", function()
    local prom = new_instance()
    prom:counter("mem", nil, { "lua" }):inc(2, { "2.1" })
    prom:counter("file", nil, { "path" }):inc(3, { "\\root" })
    local user = prom:counter("user", nil, { "name" })
    user:inc(5, { "\"quote" })
    user:inc(1, { "\"quote" })
    local text = exposition(prom)
    assert.truthy(text:find([[kong_mem{lua="2.1"} 2]], 1, true))
    assert.truthy(text:find([[kong_file{path="\\root"} 3]], 1, true))
    assert.truthy(text:find([[kong_user{name="\"quote"} 6]], 1, true))
  end)

  it("a duplicate name, or a histogram suffix of a taken name, is refused", function()
    local prom = new_instance()
    assert.truthy(prom:counter("requests_total", nil, { "code" }))
    assert.falsy(prom:counter("requests_total"))
    assert.truthy(prom:histogram("latency", nil, nil, { 1 }))
    assert.falsy(prom:counter("latency_count"))
    -- duplicates and invalid names count as errors, as in Kong's library
    assert.truthy(exposition(prom):find("kong_nginx_metric_errors_total 2\n", 1, true))
  end)

  it("a histogram: buckets sorted by value, le as Prometheus reads it, only the buckets a value fits in", function()
    local prom = new_instance()
    local h = prom:histogram("latency_ms", "Latency", { "route" }, { 1, 2.5, 25, 100, 6000 })
    h:observe(20, { "r1" })
    h:observe(20, { "r1" })
    h:observe(7000, { "r1" })
    local text = exposition(prom)
    local lines = {}
    for line in text:gmatch("[^\n]+") do
      if line:find("latency_ms", 1, true) then
        lines[#lines + 1] = line
      end
    end
    assert.same({
      "# HELP kong_latency_ms Latency",
      "# TYPE kong_latency_ms histogram",
      'kong_latency_ms_bucket{route="r1",le="25"} 2',
      'kong_latency_ms_bucket{route="r1",le="100"} 2',
      'kong_latency_ms_bucket{route="r1",le="6000"} 2',
      'kong_latency_ms_bucket{route="r1",le="+Inf"} 3',
      'kong_latency_ms_count{route="r1"} 3',
      'kong_latency_ms_sum{route="r1"} 7040',
    }, lines)
    -- stored zero-padded, so that the dict's keys sort as the buckets do
    assert.equal(2, ngx.shared.prometheus_metrics:get('latency_ms_bucket{route="r1",le="0025.0"}'))
    assert.equal(3, ngx.shared.prometheus_metrics:get('latency_ms_bucket{route="r1",le="Inf"}'))
  end)

  it("whole-number bounds: a value's bucket by its value rounded up up to 1000, past it by the bounds; seven labels", function()
    local prom = new_instance()
    local labels = { "a", "b", "c", "d", "e", "f", "g" }
    local h = prom:histogram("deep_ms", "Deep", labels, { 1, 2, 5, 1000, 3000 })
    for _, value in ipairs({ 0, 1, 1.5, 2, 999.5, 1000, 1000.2, 2999, 5000 }) do
      h:observe(value, { "1", "2", "3", "4", "5", "6", "7" })
    end
    h:observe(1, { "1", "2", "3", "4", "5", "6", "other" })
    local buckets = {}
    local text = exposition(prom)
    for le, count in text:gmatch('deep_ms_bucket{a="1",b="2",c="3",d="4",e="5",f="6",g="7",le="([^"]+)"} (%d+)') do
      buckets[#buckets + 1] = le .. "=" .. count
    end
    assert.same({ "1=2", "2=4", "5=4", "1000=6", "3000=8", "+Inf=9" }, buckets)
    assert.truthy(text:find('deep_ms_count{a="1",b="2",c="3",d="4",e="5",f="6",g="other"} 1', 1, true))
  end)

  it("a label value that is not UTF-8 is cut where it stops being; a line feed is escaped", function()
    local prom = new_instance()
    local c = prom:counter("names", nil, { "name" })
    c:inc(1, { "ok\255rest" })
    c:inc(1, { "two\nlines" })
    local text = exposition(prom)
    assert.truthy(text:find('kong_names{name="ok"} 1', 1, true))
    assert.truthy(text:find('kong_names{name="two\\nlines"} 1', 1, true))
  end)

  it("a wrong number of label values is an error, not a series", function()
    local prom = new_instance()
    local c = prom:counter("pairs_total", nil, { "a", "b" })
    c:inc(1, { "x" })
    c:inc(1)
    c:inc(1, { "x", "y" })
    local text = exposition(prom)
    assert.truthy(text:find('kong_pairs_total{a="x",b="y"} 1\n', 1, true))
    assert.falsy(text:find('kong_pairs_total{a="x"}', 1, true))
    assert.truthy(text:find("kong_nginx_metric_errors_total 2\n", 1, true))
  end)

  it("gauges: set and inc in the dict; LOCAL_STORAGE ones per worker, served even when local_only", function()
    local prom = new_instance()
    local shared = prom:gauge("shared_gauge", "In the dict", { "k" })
    shared:set(5, { "a" })
    shared:inc(2, { "a" })
    local mine = prom:gauge("local_gauge", "Per worker", nil, prometheus.LOCAL_STORAGE)
    mine:set(3)
    mine:inc(1)
    assert.truthy(exposition(prom):find('kong_shared_gauge{k="a"} 7\n', 1, true))
    local local_only = exposition(prom, true)
    assert.truthy(local_only:find("# TYPE kong_local_gauge gauge\nkong_local_gauge 4\n", 1, true))
    assert.falsy(local_only:find("shared_gauge", 1, true))
    assert.falsy(local_only:find("nginx_metric_errors_total", 1, true))
  end)

  it("counters reach the dict when the worker syncs: a scrape syncs its own worker first", function()
    local prom = new_instance()
    local c = prom:counter("synced_total", nil, { "k" })
    c:inc(4, { "a" })
    assert.is_nil(ngx.shared.prometheus_metrics:get('synced_total{k="a"}'))
    assert.truthy(exposition(prom):find('kong_synced_total{k="a"} 4\n', 1, true))
    assert.equal(4, ngx.shared.prometheus_metrics:get('synced_total{k="a"}'))
    c:inc(-1, { "a" })
    assert.truthy(exposition(prom):find('kong_synced_total{k="a"} 4\n', 1, true))
  end)
end)

describe("resty.counter", function()
  it("adds this worker's increments to the dict and forgets them", function()
    ngx.shared.prometheus_metrics:flush_all()
    local c = assert(resty_counter.new("prometheus_metrics"))
    c:incr("a", 2)
    c:incr("a")
    c:incr("b", 0.5)
    assert.equal(0, c:sync())
    assert.equal(3, c:get("a"))
    assert.equal(0.5, c:get("b"))
    c:incr("a", 1)
    c:sync()
    assert.equal(4, c:get("a"))
    assert.same({}, c.increments)
  end)

  it("an unknown dict is an error", function()
    local c, err = resty_counter.new("no_such_dict")
    assert.is_nil(c)
    assert.equal("lua_shared_dict 'no_such_dict' not found", err)
  end)
end)
