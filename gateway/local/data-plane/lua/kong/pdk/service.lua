-- kong.service (kong/pdk/service.lua, 3.9.3): where the request goes. The data plane has no
-- upstream entities (ring balancers), so set_upstream is refused with a reason.
local phase_checker = require "kong.pdk.private.phases"
local hostname_type = require("kong.tools.ip").hostname_type

local ngx = ngx
local type = type
local floor = math.floor
local check_phase = phase_checker.check

local PHASES = phase_checker.phases
local access_and_rewrite_and_balancer = phase_checker.new(PHASES.rewrite, PHASES.access, PHASES.balancer)

return {
  new = function()
    local service = {}

    function service.set_upstream(host)
      check_phase(PHASES.access)
      if type(host) ~= "string" then
        error("host must be a string", 2)
      end
      return nil, "could not find an Upstream named '" .. host .. "' (upstreams are not supported by the local gateway)"
    end

    function service.set_target(host, port)
      check_phase(access_and_rewrite_and_balancer)
      if type(host) ~= "string" then
        error("host must be a string", 2)
      end
      if type(port) ~= "number" or floor(port) ~= port then
        error("port must be an integer", 2)
      end
      if port < 0 or port > 65535 then
        error("port must be an integer between 0 and 65535: given " .. port, 2)
      end

      ngx.var.upstream_host = host
      local balancer_data = ngx.ctx.balancer_data
      balancer_data.host = host
      balancer_data.type = hostname_type(host)
      balancer_data.port = port
    end

    function service.set_retries(retries)
      check_phase(access_and_rewrite_and_balancer)
      if type(retries) ~= "number" or floor(retries) ~= retries then
        error("retries must be an integer", 2)
      end
      if retries < 0 or retries > 32767 then
        error("port must be an integer between 0 and 32767: given " .. retries, 2)
      end
      ngx.ctx.balancer_data.retries = retries
    end

    function service.set_timeouts(connect_timeout, write_timeout, read_timeout)
      check_phase(access_and_rewrite_and_balancer)
      for name, value in pairs({ connect_timeout = connect_timeout, write_timeout = write_timeout,
                                 read_timeout = read_timeout }) do
        if type(value) ~= "number" or floor(value) ~= value then
          error(name .. " must be an integer", 2)
        end
        if value < 1 or value > 2147483646 then
          error(name .. " must be an integer between 1 and 2147483646: given " .. value, 2)
        end
      end
      local balancer_data = ngx.ctx.balancer_data
      balancer_data.connect_timeout = connect_timeout
      balancer_data.send_timeout = write_timeout
      balancer_data.read_timeout = read_timeout
    end

    return service
  end,
}
