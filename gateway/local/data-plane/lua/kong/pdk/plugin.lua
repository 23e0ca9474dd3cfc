-- kong.plugin (kong/pdk/plugin.lua, 3.9.3)
return {
  new = function()
    return {
      get_id = function()
        return ngx.ctx.plugin_id
      end,
    }
  end,
}
