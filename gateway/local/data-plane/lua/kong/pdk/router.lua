-- kong.router (kong/pdk/router.lua, 3.9.3)
local phase_checker = require "kong.pdk.private.phases"

local check_phase = phase_checker.check
local PHASES = phase_checker.phases
local ROUTER_PHASES = phase_checker.new(PHASES.access, PHASES.header_filter, PHASES.response,
                                        PHASES.body_filter, PHASES.log)

return {
  new = function()
    local router = {}

    function router.get_route()
      check_phase(ROUTER_PHASES)
      return ngx.ctx.route
    end

    function router.get_service()
      check_phase(ROUTER_PHASES)
      return ngx.ctx.service
    end

    return router
  end,
}
