-- kong.ctx (kong/pdk/ctx.lua): kong.ctx.shared lives for the request, kong.ctx.plugin for the
-- request and one plugin. The runner points both at the running request's tables.
local ctx = { shared = nil, plugin = nil }

--- Points kong.ctx at a request's state for one plugin.
function ctx.enter(request, plugin_name)
  local plugin_state = request.plugin[plugin_name]
  if not plugin_state then
    plugin_state = {}
    request.plugin[plugin_name] = plugin_state
  end
  ctx.plugin = plugin_state
  ctx.shared = request.shared
end

return ctx
