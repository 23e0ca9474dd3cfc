-- The edge plugin's own counters, served beside Kong's metrics: registered through Kong's
-- prometheus exporter as any plugin on Kong can
-- (require("kong.plugins.prometheus.exporter").get_prometheus():counter(...)), which serves them
-- with its `kong_` prefix:
--   kong_animal_store_edge_bans_total{consumer}            bans started
--   kong_animal_store_edge_banned_requests_total{consumer} requests refused while banned
--   kong_animal_store_edge_checksum_failures_total         keys refused before key-auth saw them
-- Nothing is counted when the prometheus plugin is not loaded on the node.
local kong = kong
local pcall = pcall

local metrics = {}

local bans, banned_requests, checksum_failures
local consumer_label = { "" }

--- Registers the counters (init_worker: every handler, the exporter's included, is loaded then).
function metrics.init()
  local loaded = kong.configuration.loaded_plugins
  if not (loaded and loaded["prometheus"]) then
    return
  end
  local ok, exporter = pcall(require, "kong.plugins.prometheus.exporter")
  if not ok then
    kong.log.warn("the prometheus plugin is loaded but its exporter is not: no edge metrics (", exporter, ")")
    return
  end
  local prometheus = exporter.get_prometheus()
  if not prometheus then
    return
  end
  bans = prometheus:counter("animal_store_edge_bans_total",
                            "Bans started by the animal-store-edge plugin", { "consumer" })
  banned_requests = prometheus:counter("animal_store_edge_banned_requests_total",
                                       "Requests refused while banned by the animal-store-edge plugin", { "consumer" })
  checksum_failures = prometheus:counter("animal_store_edge_checksum_failures_total",
                                         "API keys refused before key-auth by the animal-store-edge plugin")
end

--- A ban started for the key of `username` ("" when the key has no consumer username).
function metrics.ban_started(username)
  if bans then
    consumer_label[1] = username or ""
    bans:inc(1, consumer_label)
  end
end

--- A request refused because the key of `username` is banned.
function metrics.banned_request(username)
  if banned_requests then
    consumer_label[1] = username or ""
    banned_requests:inc(1, consumer_label)
  end
end

--- A key refused before key-auth looked it up.
function metrics.checksum_failure()
  if checksum_failures then
    checksum_failures:inc(1)
  end
end

return metrics
