-- kong.nginx (kong/pdk/nginx.lua, 3.9.3), the parts that do not need lua-kong-nginx-module.
-- get_statistics reads nginx's stub_status counters (ngx_stat_*, shared by all workers) through
-- the FFI as Kong does: Debian's nginx is built with http_stub_status and exports them.
local ffi = require "ffi"

local C = ffi.C
local ngx = ngx
local pcall = pcall
local tonumber = tonumber
local subsystem = ngx.config.subsystem

local counter_type = (ffi.arch == "x64" or ffi.arch == "arm64") and "uint64_t" or "uint32_t"
local STATS = { "active", "reading", "writing", "waiting", "requests", "accepted", "handled" }
local declarations = {}
for i, name in ipairs(STATS) do
  declarations[i] = counter_type .. " *ngx_stat_" .. name .. ";"
end
ffi.cdef(table.concat(declarations, "\n"))

-- nil when the binary has no stub_status module (the symbols are then missing)
local has_stub_status = pcall(function()
  return C.ngx_stat_requests[0]
end)

return {
  new = function()
    local _NGINX = {}

    function _NGINX.get_subsystem()
      return subsystem
    end

    --- Connections and requests of the whole nginx (all workers), as stub_status counts them.
    function _NGINX.get_statistics()
      if not has_stub_status then
        error("nginx was built without the stub_status module: no connection statistics", 2)
      end
      return {
        connections_active = tonumber(C.ngx_stat_active[0]),
        connections_reading = tonumber(C.ngx_stat_reading[0]),
        connections_writing = tonumber(C.ngx_stat_writing[0]),
        connections_waiting = tonumber(C.ngx_stat_waiting[0]),
        connections_accepted = tonumber(C.ngx_stat_accepted[0]),
        connections_handled = tonumber(C.ngx_stat_handled[0]),
        total_requests = tonumber(C.ngx_stat_requests[0]),
      }
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
