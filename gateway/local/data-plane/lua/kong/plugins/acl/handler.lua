-- acl with Kong 3.9's behaviour (kong/plugins/acl/handler.lua): the consumer's groups (or the
-- groups an authentication plugin set in kong.ctx.shared.authenticated_groups) against the
-- configured allow or deny list; 401 with no one authenticated, 403 "You cannot consume this
-- service" when refused; the groups upstream in X-Consumer-Groups / X-Authenticated-Groups.
local constants = require "kong.constants"
local groups = require "kong.plugins.acl.groups"
local kong_meta = require "kong.meta"


local kong = kong
local error = error
local concat = table.concat
local setmetatable = setmetatable


local CONSUMER_GROUPS = constants.HEADERS.CONSUMER_GROUPS
local AUTHENTICATED_GROUPS = constants.HEADERS.AUTHENTICATED_GROUPS
local FORBIDDEN = "You cannot consume this service"
local DENY = "DENY"
local ALLOW = "ALLOW"
local EMPTY = {}

local weak_keys = { __mode = "k" }
-- conf -> { type, groups, hide_groups_header, verdicts = { [consumer_groups] = true | header } }
local derived_by_conf = setmetatable({}, weak_keys)


local function derive(conf)
  local derived = derived_by_conf[conf]
  if not derived then
    local kind = (conf.deny or EMPTY)[1] and DENY or ALLOW
    derived = {
      type = kind,
      groups = kind == DENY and conf.deny or conf.allow,
      hide_groups_header = conf.hide_groups_header,
      verdicts = setmetatable({}, weak_keys),
    }
    derived_by_conf[conf] = derived
  end
  return derived
end


-- true when the request is refused; otherwise the header value to send ("" when it is hidden).
-- A deny list that `in_group` is nil for (authenticated groups matched nothing) gives nil: no
-- header, as Kong's.
local function verdict(derived, member_groups, in_group)
  local blocked
  if derived.type == DENY then
    blocked = in_group
  else
    blocked = not in_group
  end
  if blocked == false then
    return derived.hide_groups_header and "" or concat(member_groups, ", ")
  end
  return blocked
end


local ACLHandler = {
  PRIORITY = 950,
  VERSION = kong_meta.version,
  -- the schema's `consumer = typedefs.no_consumer`, enforced by the control plane
  no_consumer = true,
}


function ACLHandler:access(conf)
  local derived = derive(conf)
  local result

  local consumer_id = groups.get_current_consumer_id()
  if not consumer_id then
    local authenticated_groups = groups.get_authenticated_groups()
    if not authenticated_groups then
      if kong.client.get_credential() then
        return kong.response.error(403, FORBIDDEN)
      end
      return kong.response.error(401)
    end
    result = verdict(derived, authenticated_groups, groups.group_in_groups(derived.groups, authenticated_groups))

  else
    local credential = kong.client.get_credential()
    local authenticated_groups
    if not credential or conf.always_use_authenticated_groups then
      -- authenticated groups win over an anonymous consumer's groups
      authenticated_groups = groups.get_authenticated_groups()
    end

    if authenticated_groups then
      consumer_id = nil
      result = verdict(derived, authenticated_groups, groups.group_in_groups(derived.groups, authenticated_groups))

    else
      local consumer_groups, err = groups.get_consumer_groups(consumer_id)
      if err then
        return error(err)
      end
      if not consumer_groups then
        if derived.type ~= DENY then
          if credential then
            return kong.response.error(403, FORBIDDEN)
          end
          return kong.response.error(401)
        end
        consumer_groups = EMPTY
      end

      result = derived.verdicts[consumer_groups]
      if result == nil then
        result = verdict(derived, consumer_groups, groups.consumer_in_groups(derived.groups, consumer_groups))
        derived.verdicts[consumer_groups] = result
      end
    end
  end

  if result == true then
    return kong.response.error(403, FORBIDDEN)
  end

  if not conf.hide_groups_header and result then
    kong.service.request.set_header(consumer_id and CONSUMER_GROUPS or AUTHENTICATED_GROUPS, result)
  end
end


return ACLHandler
