-- correlation-id with Kong 3.9's behaviour (kong/plugins/correlation-id/handler.lua): a request
-- without the header gets one upstream, from one of three generators, and optionally the same
-- value back downstream.
local uuid = require("kong.tools.uuid").uuid
local kong_meta = require "kong.meta"


local kong = kong
local ngx = ngx
local fmt = string.format


local worker_uuid
local worker_counter


local function init_worker_ids()
  worker_uuid = uuid()
  worker_counter = 0
end


local generators = {
  ["uuid"] = function()
    return uuid()
  end,

  ["uuid#counter"] = function()
    if not worker_uuid then
      init_worker_ids()
    end
    worker_counter = worker_counter + 1
    return worker_uuid .. "#" .. worker_counter
  end,

  ["tracker"] = function()
    local var = ngx.var
    return fmt("%s-%s-%d-%s-%s-%0.3f",
      var.server_addr,
      var.server_port,
      ngx.worker.pid(),
      var.connection,          -- connection serial number
      var.connection_requests, -- requests made through this connection so far
      ngx.now()                -- nginx's cached time (the test clock's, in tests)
    )
  end,
}


local CorrelationIdHandler = {
  PRIORITY = 100001,
  VERSION = kong_meta.version,
}


function CorrelationIdHandler:init_worker()
  init_worker_ids()
end


function CorrelationIdHandler:access(conf)
  local correlation_id = kong.request.get_header(conf.header_name)
  if not correlation_id or correlation_id == "" then
    correlation_id = generators[conf.generator]()
    if correlation_id then
      kong.service.request.set_header(conf.header_name, correlation_id)
    end
  end

  kong.log.set_serialize_value("correlation_id", correlation_id)

  if conf.echo_downstream then
    -- echoed by header_filter
    kong.ctx.plugin.correlation_id = correlation_id
  end
end


function CorrelationIdHandler:header_filter(conf)
  if not conf.echo_downstream then
    return
  end

  -- access may not have run (an earlier plugin or Kong itself answered): the request's own
  -- header, else a new value
  local correlation_id = kong.ctx.plugin.correlation_id or
                         kong.request.get_header(conf.header_name)

  if not correlation_id or correlation_id == "" then
    correlation_id = generators[conf.generator]()
  end

  kong.response.set_header(conf.header_name, correlation_id)
end


return CorrelationIdHandler
