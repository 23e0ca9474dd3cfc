-- The prometheus exporter's per-request library work in process (test/bench/prometheus-cost.ts
-- runs it inside nginx's init_by_lua): what exporter.lua's log adds for one proxied request of
-- kong.yml's settings (a status code, two bandwidth directions, three latency histograms), on
-- Kong's metrics with their labels and buckets, syncing the worker's counters every 10,000.
-- Prints "<µs per request>" on stderr and exits.
local prometheus = require "kong.plugins.prometheus.prometheus"
local resty_counter = require "resty.counter"

local N = tonumber(os.getenv("PROMETHEUS_LOG_PATH_N") or "") or 200000
local KONG_BUCKETS = { 1, 2, 5, 7, 10, 15, 20, 30, 50, 75, 100, 200, 500, 750, 1000, 3000, 6000 }
local UPSTREAM_BUCKETS = { 25, 50, 80, 100, 250, 400, 700, 1000, 2000, 5000, 10000, 30000, 60000 }

local prom = prometheus.init("prometheus_metrics", "kong_")
prom._counter = assert(resty_counter.new("prometheus_metrics"))
local status = prom:counter("http_requests_total", "", { "service", "route", "code", "source", "workspace", "consumer" })
local bandwidth = prom:counter("bandwidth_bytes", "", { "service", "route", "direction", "workspace", "consumer" })
local latencies = {
  prom:histogram("request_latency_ms", "", { "service", "route", "workspace" }, UPSTREAM_BUCKETS),
  prom:histogram("upstream_latency_ms", "", { "service", "route", "workspace" }, UPSTREAM_BUCKETS),
  prom:histogram("kong_latency_ms", "", { "service", "route", "workspace" }, KONG_BUCKETS),
}

local status_labels = { 0, 0, 0, 0, "default", 0 }
local bandwidth_labels = { 0, 0, 0, "default", 0 }
local latency_labels = { 0, 0, "default" }

local function one_request(i)
  local consumer = i % 2 == 0 and "alice" or "bob"
  status_labels[1], status_labels[2], status_labels[3], status_labels[4], status_labels[6] =
    "animal-store-backend", "animal-store-v1", 200, "service", consumer
  status:inc(1, status_labels)
  bandwidth_labels[1], bandwidth_labels[2], bandwidth_labels[5] = "animal-store-backend", "animal-store-v1", consumer
  bandwidth_labels[3] = "ingress"
  bandwidth:inc(300, bandwidth_labels)
  bandwidth_labels[3] = "egress"
  bandwidth:inc(900, bandwidth_labels)
  latency_labels[1], latency_labels[2] = "animal-store-backend", "animal-store-v1"
  latencies[1]:observe(3, latency_labels)
  latencies[2]:observe(2, latency_labels)
  latencies[3]:observe(1, latency_labels)
end

for i = 1, 20000 do
  one_request(i)
end
prom:sync()
ngx.update_time()
local started = ngx.now()
for i = 1, N do
  one_request(i)
  if i % 10000 == 0 then
    prom:sync()
  end
end
ngx.update_time()
io.stderr:write(string.format("%.3f\n", (ngx.now() - started) * 1e6 / N))
os.exit(0)
