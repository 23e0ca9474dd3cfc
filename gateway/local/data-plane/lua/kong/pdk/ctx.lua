-- kong.ctx (kong/pdk/ctx.lua, 3.9.3): `shared` for every plugin of a request, `plugin` for the
-- running plugin's handlers only (keyed by the handler, as Kong keys it).
local get_request = require("resty.core.base").get_request

local SHARED_KEY = {}
local CORE_KEY = {}

local function table_in(nctx, key)
  local t = nctx[key]
  if not t then
    t = {}
    nctx[key] = t
  end
  return t
end

return {
  new = function()
    return setmetatable({}, {
      __index = function(_, k)
        if not get_request() then
          return nil
        end
        local nctx = ngx.ctx
        if k == "shared" then
          return table_in(nctx, SHARED_KEY)
        elseif k == "plugin" then
          local plugin = nctx.KONG_PLUGIN
          if plugin then
            return table_in(nctx, plugin.handler)
          end
        elseif k == "core" then
          return table_in(nctx, CORE_KEY)
        end
      end,
    })
  end,
}
