-- Kong 3.9.3's prometheus plugin handler (kong/plugins/prometheus/handler.lua): PRIORITY 13, the
-- exporter set up when the module loads (init), per worker in init_worker, told in configure
-- whether any instance is configured, and fed in the log phase. Where Kong's log() builds the
-- whole kong.log.serialize() table to read a few fields of it, this one reads those fields
-- directly (exporter.log_request): the same values for a fraction of the work.
local exporter = require "kong.plugins.prometheus.exporter"
local kong_meta = require "kong.meta"

local ngx = ngx

exporter.init()

local PrometheusHandler = {
  PRIORITY = 13,
  VERSION = kong_meta.version,
}

function PrometheusHandler:init_worker()
  exporter.init_worker()
end

function PrometheusHandler:configure(configs)
  exporter.configure(configs)
end

function PrometheusHandler:log(conf)
  exporter.log_request(conf, ngx.ctx)
end

return PrometheusHandler
