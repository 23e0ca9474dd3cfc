-- kong.nginx (kong/pdk/nginx.lua, 3.9.3), the parts that do not need lua-kong-nginx-module.
local subsystem = ngx.config.subsystem

return {
  new = function()
    local _NGINX = {}

    function _NGINX.get_subsystem()
      return subsystem
    end

    function _NGINX.get_statistics()
      return {}
    end

    function _NGINX.get_ctx(k)
      return ngx.ctx[k]
    end

    function _NGINX.set_ctx(k, v)
      ngx.ctx[k] = v
    end

    return _NGINX
  end,
}
