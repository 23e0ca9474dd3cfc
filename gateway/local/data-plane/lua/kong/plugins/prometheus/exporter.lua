-- Kong 3.9.3's prometheus exporter (kong/plugins/prometheus/exporter.lua): the metrics Kong
-- registers, with their names, labels, help texts and buckets, what the log phase adds to them,
-- and the node-level gauges set at each scrape. Other plugins add their own metrics as they do
-- on Kong: require("kong.plugins.prometheus.exporter").get_prometheus():counter(name, help,
-- labels), served with the `kong_` prefix.
--
-- Not exported here (nothing to report on this data plane): stream metrics (no stream
-- subsystem), upstream target health (no upstream entities, so upstream_health_metrics finds no
-- target), data_plane_cluster_cert_expiry_timestamp (the cluster protocol has no certificate),
-- and the AI metrics (no AI plugin records any; their names are registered as Kong's are).
local prometheus_lib = require "kong.plugins.prometheus.prometheus"
local meta = require "kong.meta"
-- nginx's own clock: the test clock moves what plugins see (ngx.now), not how long a request took
local real_now = require("kong.tools.clock").real_now

local kong = kong
local ngx = ngx
local var = ngx.var
local type = type
local pcall = pcall
local tonumber = tonumber
local start_time = ngx.req.start_time
local floor = math.floor
local timer_running_count = ngx.timer.running_count
local timer_pending_count = ngx.timer.pending_count

local DICT = "prometheus_metrics"
local WORKSPACE = "default" -- the one workspace of Kong OSS
local SUBSYSTEM = ngx.config.subsystem

-- exporter.lua KONG_LATENCY_BUCKETS, UPSTREAM_LATENCY_BUCKETS, AI_LLM_PROVIDER_LATENCY_BUCKETS
local KONG_LATENCY_BUCKETS = { 1, 2, 5, 7, 10, 15, 20, 30, 50, 75, 100, 200, 500, 750, 1000, 3000, 6000 }
local UPSTREAM_LATENCY_BUCKETS = { 25, 50, 80, 100, 250, 400, 700, 1000, 2000, 5000, 10000, 30000, 60000 }
local AI_LLM_PROVIDER_LATENCY_BUCKETS = { 250, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 10000,
                                          30000, 60000 }
local AI_LABELS = { "ai_provider", "ai_model", "cache_status", "vector_db", "embeddings_provider",
                    "embeddings_model", "workspace" }
local AI_TOKEN_LABELS = { "ai_provider", "ai_model", "cache_status", "vector_db", "embeddings_provider",
                          "embeddings_model", "token_type", "workspace" }

local CONNECTION_STATES = {
  { "accepted", "connections_accepted" },
  { "handled", "connections_handled" },
  { "total", "total_requests" },
  { "active", "connections_active" },
  { "reading", "connections_reading" },
  { "writing", "connections_writing" },
  { "waiting", "connections_waiting" },
}

local prometheus
local metrics = {}
local node_id
-- exporter.configure: whether any prometheus plugin instance is configured; without one only
-- the per-worker gauges are served
local enabled = false

local exporter = {}

--- exporter.lua init(): in init (the handler module is loaded then), before workers fork.
function exporter.init()
  if not ngx.shared[DICT] then
    kong.log.err("prometheus: ngx shared dict 'prometheus_metrics' not found")
    return
  end
  node_id = kong.node.get_id()
  prometheus = prometheus_lib.init(DICT, "kong_")
  local LOCAL = prometheus.LOCAL_STORAGE

  metrics.connections = prometheus:gauge("nginx_connections_total", "Number of connections by subsystem",
                                         { "node_id", "subsystem", "state" }, LOCAL)
  metrics.nginx_requests_total = prometheus:gauge("nginx_requests_total", "Number of requests total",
                                                  { "node_id", "subsystem" }, LOCAL)
  metrics.timers = prometheus:gauge("nginx_timers", "Number of nginx timers", { "state" }, LOCAL)
  metrics.db_reachable = prometheus:gauge("datastore_reachable", "Datastore reachable from Kong, 0 is unreachable",
                                          nil, LOCAL)
  metrics.node_info = prometheus:gauge("node_info", "Kong Node metadata information", { "node_id", "version" }, LOCAL)
  metrics.node_info:set(1, { node_id, meta.version })
  metrics.upstream_target_health = prometheus:gauge("upstream_target_health",
    "Health status of targets of upstream. States = healthchecks_off|healthy|unhealthy|dns_error, " ..
    "value is 1 when state is populated.", { "upstream", "target", "address", "state", "subsystem" }, LOCAL)

  metrics.worker_vms = prometheus:gauge("memory_workers_lua_vms_bytes", "Allocated bytes in worker Lua VM",
                                        { "node_id", "pid", "kong_subsystem" }, LOCAL)
  metrics.shms = prometheus:gauge("memory_lua_shared_dict_bytes", "Allocated slabs in bytes in a shared_dict",
                                  { "node_id", "shared_dict", "kong_subsystem" }, LOCAL)
  metrics.shm_capacity = prometheus:gauge("memory_lua_shared_dict_total_bytes",
                                          "Total capacity in bytes of a shared_dict",
                                          { "node_id", "shared_dict", "kong_subsystem" }, LOCAL)
  for name, dict in pairs(kong.node.get_memory_stats().lua_shared_dicts) do
    metrics.shm_capacity:set(dict.capacity, { node_id, name, SUBSYSTEM })
  end

  metrics.status = prometheus:counter("http_requests_total", "HTTP status codes per consumer/service/route in Kong",
                                      { "service", "route", "code", "source", "workspace", "consumer" })
  metrics.kong_latency = prometheus:histogram("kong_latency_ms",
    "Latency added by Kong and enabled plugins for each service/route in Kong",
    { "service", "route", "workspace" }, KONG_LATENCY_BUCKETS)
  metrics.upstream_latency = prometheus:histogram("upstream_latency_ms",
    "Latency added by upstream response for each service/route in Kong",
    { "service", "route", "workspace" }, UPSTREAM_LATENCY_BUCKETS)
  metrics.total_latency = prometheus:histogram("request_latency_ms",
    "Total latency incurred during requests for each service/route in Kong",
    { "service", "route", "workspace" }, UPSTREAM_LATENCY_BUCKETS)
  metrics.bandwidth = prometheus:counter("bandwidth_bytes", "Total bandwidth (ingress/egress) throughput in bytes",
                                         { "service", "route", "direction", "workspace", "consumer" })

  metrics.ai_llm_requests = prometheus:counter("ai_llm_requests_total", "AI requests total per ai_provider in Kong",
                                               AI_LABELS)
  metrics.ai_llm_cost = prometheus:counter("ai_llm_cost_total", "AI requests cost per ai_provider/cache in Kong",
                                           AI_LABELS)
  metrics.ai_llm_tokens = prometheus:counter("ai_llm_tokens_total", "AI requests cost per ai_provider/cache in Kong",
                                             AI_TOKEN_LABELS)
  metrics.ai_llm_provider_latency = prometheus:histogram("ai_llm_provider_latency_ms",
    "LLM response Latency for each AI plugins per ai_provider in Kong", AI_LABELS, AI_LLM_PROVIDER_LATENCY_BUCKETS)
end

function exporter.init_worker()
  if prometheus then
    prometheus:init_worker()
  end
end

function exporter.configure(configs)
  enabled = configs ~= nil
end

-- label lists reused from one request to the next (the library copies what it keeps); the
-- label that varies most comes last, as Kong orders them, so that label trees share branches
local labels_bandwidth = { 0, 0, 0, WORKSPACE, 0 }
local labels_status = { 0, 0, 0, 0, WORKSPACE, 0 }
local labels_latency = { 0, 0, WORKSPACE }

--- What exporter.lua log() adds for one request. `consumer` is a username or "" (nil when
-- per_consumer is off), `ingress`/`egress` are byte counts (nil when bandwidth_metrics is off),
-- `status`/`source` nil when status_code_metrics is off, the latencies nil when latency_metrics
-- is off or, per latency, when the request had none (proxy: never proxied).
local function record(service_name, route_name, consumer, status, source, ingress, egress,
                      request_latency, proxy_latency, kong_latency)
  consumer = consumer or ""

  if ingress or egress then
    labels_bandwidth[1] = service_name
    labels_bandwidth[2] = route_name
    labels_bandwidth[5] = consumer
    if ingress and ingress > 0 then
      labels_bandwidth[3] = "ingress"
      metrics.bandwidth:inc(ingress, labels_bandwidth)
    end
    if egress and egress > 0 then
      labels_bandwidth[3] = "egress"
      metrics.bandwidth:inc(egress, labels_bandwidth)
    end
  end

  if status then
    labels_status[1] = service_name
    labels_status[2] = route_name
    labels_status[3] = status
    labels_status[4] = source
    labels_status[6] = consumer
    metrics.status:inc(1, labels_status)
  end

  if request_latency or proxy_latency or kong_latency then
    labels_latency[1] = service_name
    labels_latency[2] = route_name
    if request_latency and request_latency >= 0 then
      metrics.total_latency:observe(request_latency, labels_latency)
    end
    if proxy_latency and proxy_latency >= 0 then
      metrics.upstream_latency:observe(proxy_latency, labels_latency)
    end
    if kong_latency and kong_latency >= 0 then
      metrics.kong_latency:observe(kong_latency, labels_latency)
    end
  end
end

local function username_of(consumer)
  local username = consumer and consumer.username
  return type(username) == "string" and username or ""
end

--- The handler's log phase: the values kong.log.serialize() would give the handler (service,
-- route, consumer, response status and source, request and response sizes, latencies), read
-- straight from ngx.ctx and nginx's variables rather than through a whole serialized request.
function exporter.log_request(conf, ctx)
  if not prometheus then
    return kong.log.err("prometheus: can not log metrics because of an initialization error, please make sure ",
                        "that you've declared 'prometheus_metrics' shared dict in your nginx template")
  end
  local route = ctx.route
  if not route then
    return
  end
  local service = ctx.service
  local service_name = service and (service.name or service.host) or ""
  local route_name = route.name or route.id

  local consumer
  if conf.per_consumer then
    consumer = username_of(ctx.authenticated_consumer)
  end

  local status, source
  if conf.status_code_metrics then
    status = ngx.status
    source = kong.response.get_source(ctx) == "service" and "service" or "kong"
  end

  local ingress, egress
  if conf.bandwidth_metrics then
    ingress = tonumber(var.request_length)
    egress = tonumber(var.bytes_sent)
  end

  local request_latency, proxy_latency, kong_latency
  if conf.latency_metrics then
    -- kong.log.serialize's latencies.request: var.request_time * 1000, which nginx computes in
    -- whole milliseconds from the same cached time (without formatting and parsing it here)
    request_latency = floor((real_now() - start_time()) * 1000 + 0.5)
    if request_latency < 0 then
      request_latency = 0
    end
    proxy_latency = ctx.KONG_WAITING_TIME or -1
    kong_latency = (ctx.KONG_PROXY_LATENCY or ctx.KONG_RESPONSE_LATENCY or 0) + (ctx.KONG_RECEIVE_TIME or 0)
  end

  record(service_name, route_name, consumer, status, source, ingress, egress, request_latency, proxy_latency,
         kong_latency)
end

--- exporter.lua log(message, serialized), for callers holding a kong.log.serialize() result.
function exporter.log(message, serialized)
  if not prometheus then
    return kong.log.err("prometheus: can not log metrics because of an initialization error, please make sure ",
                        "that you've declared 'prometheus_metrics' shared dict in your nginx template")
  end
  if not (message and message.route) then
    return
  end
  local service_name = message.service and (message.service.name or message.service.host) or ""
  local latencies = serialized.latencies
  record(service_name, message.route.name or message.route.id, serialized.consumer, serialized.status_code,
         serialized.status_code and (kong.response.get_source() == "service" and "service" or "kong"),
         serialized.ingress_size, serialized.egress_size,
         latencies and latencies.request, latencies and latencies.proxy, latencies and latencies.kong)
end

--- The node-level gauges, set in this worker at each scrape, then the exposition through
-- `write_fn` (ngx.print by default).
function exporter.metric_data(write_fn)
  if not prometheus then
    kong.log.err("prometheus: plugin is not initialized, please make sure ",
                 " 'prometheus_metrics' shared dict is present in nginx template")
    return kong.response.exit(500, { message = "An unexpected error occurred" })
  end

  local ok, stats = pcall(kong.nginx.get_statistics)
  if ok then
    for _, state in ipairs(CONNECTION_STATES) do
      metrics.connections:set(stats[state[2]], { node_id, SUBSYSTEM, state[1] })
    end
    metrics.nginx_requests_total:set(stats.total_requests, { node_id, SUBSYSTEM })
  else
    kong.log.err("prometheus: ", stats)
  end

  metrics.timers:set(timer_running_count(), { "running" })
  metrics.timers:set(timer_pending_count(), { "pending" })
  -- a data plane has no database (Kong's DB-less connector always connects)
  metrics.db_reachable:set(1)

  local memory = kong.node.get_memory_stats()
  for name, dict in pairs(memory.lua_shared_dicts) do
    metrics.shms:set(dict.allocated_slabs, { node_id, name, SUBSYSTEM })
  end
  local vms = memory.workers_lua_vms
  for i = 1, #vms do
    if vms[i].http_allocated_gc then
      metrics.worker_vms:set(vms[i].http_allocated_gc, { node_id, vms[i].pid, SUBSYSTEM })
    end
  end

  prometheus:metric_data(write_fn, not enabled)
end

--- GET /metrics (the Status API; Kong's Admin API serves the same).
function exporter.collect()
  ngx.header["Content-Type"] = "text/plain; charset=UTF-8"
  exporter.metric_data()
end

--- The library instance, for plugins that add their own metrics (nil, logged, when the
-- prometheus_metrics dict is missing).
function exporter.get_prometheus()
  if not prometheus then
    kong.log.err("prometheus: plugin is not initialized, please make sure ",
                 " 'prometheus_metrics' shared dict is present in nginx template")
  end
  return prometheus
end

--- Kong exports upstream target health when a plugin instance asks for it; this data plane runs
-- no upstream entities, so there is never a target to report.
function exporter.set_export_upstream_health_metrics()
end

return exporter
