-- kong.client (kong/pdk/client.lua, 3.9.3)
local phase_checker = require "kong.pdk.private.phases"
local entities = require "kong.runloop.entities"
local check_https = require("kong.tools.http").check_https

local ngx = ngx
local type = type
local tonumber = tonumber
local check_phase = phase_checker.check
local check_not_phase = phase_checker.check_not

local PHASES = phase_checker.phases
local AUTH_AND_LATER = phase_checker.new(PHASES.access, PHASES.header_filter, PHASES.response,
                                         PHASES.body_filter, PHASES.log)
local TABLE_OR_NIL = { ["table"] = true, ["nil"] = true }

local UUID = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$"

return {
  new = function(self)
    local client = {}

    --- The address that connected (before trusted_ips / real_ip_header replaced it).
    function client.get_ip()
      check_not_phase(PHASES.init_worker)
      local var = ngx.var
      return var.realip_remote_addr or var.remote_addr
    end

    --- The client's address as the real_ip settings make it (X-Real-IP from a trusted peer).
    function client.get_forwarded_ip()
      check_not_phase(PHASES.init_worker)
      return ngx.var.remote_addr
    end

    function client.get_port()
      check_not_phase(PHASES.init_worker)
      local var = ngx.var
      return tonumber(var.realip_remote_port or var.remote_port)
    end

    function client.get_forwarded_port()
      check_not_phase(PHASES.init_worker)
      return tonumber(ngx.var.remote_port)
    end

    function client.get_credential()
      check_phase(AUTH_AND_LATER)
      return ngx.ctx.authenticated_credential
    end

    function client.get_consumer()
      check_phase(AUTH_AND_LATER)
      return ngx.ctx.authenticated_consumer
    end

    --- The consumer with this id (or username, when search_by_username), from the snapshot.
    function client.load_consumer(consumer_id, search_by_username)
      check_phase(AUTH_AND_LATER)

      if type(consumer_id) ~= "string" then
        error("consumer_id must be a string", 2)
      end

      local is_uuid = consumer_id:match(UUID) ~= nil
      if not is_uuid and not search_by_username then
        error("cannot load a consumer with an id that is not a uuid", 2)
      end

      if is_uuid then
        local consumer = entities.consumer(consumer_id:lower())
        if consumer then
          return consumer
        end
      end

      if search_by_username then
        return entities.consumer_by_username(consumer_id)
      end
    end

    function client.authenticate(consumer, credential)
      check_phase(PHASES.access)

      if not TABLE_OR_NIL[type(consumer)] then
        error("consumer must be a table or nil", 2)
      elseif not TABLE_OR_NIL[type(credential)] then
        error("credential must be a table or nil", 2)
      elseif credential == nil and consumer == nil then
        error("either credential or consumer must be provided", 2)
      end

      local ctx = ngx.ctx
      ctx.authenticated_consumer = consumer
      ctx.authenticated_credential = credential
    end

    function client.get_protocol(allow_terminated)
      check_phase(AUTH_AND_LATER)

      local route = ngx.ctx.route
      if not route then
        return nil, "No active route found"
      end

      local protocols = route.protocols
      if #protocols == 1 then
        return protocols[1]
      end

      local is_https, err = check_https(self.ip.is_trusted(client.get_ip()), allow_terminated)
      if err then
        return nil, err
      end
      return is_https and "https" or "http"
    end

    return client
  end,
}
