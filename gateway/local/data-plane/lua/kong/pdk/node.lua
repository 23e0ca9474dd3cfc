-- kong.node (kong/pdk/node.lua, 3.9.3): this node's id (kong_conf.json node_id) and hostname.
local ffi = require "ffi"

ffi.cdef [[
int gethostname(char *name, size_t len);
]]

local hostname

return {
  new = function(self)
    local node = {}

    function node.get_id()
      return self.configuration.node_id
    end

    function node.get_hostname()
      if not hostname then
        local size = 253
        local buf = ffi.new("unsigned char[?]", size)
        if ffi.C.gethostname(buf, size) ~= 0 then
          error("could not get hostname")
        end
        hostname = ffi.string(buf):gsub("%z+$", "")
      end
      return hostname
    end

    function node.get_memory_stats()
      return { workers_lua_vms = {}, lua_shared_dicts = {} }
    end

    return node
  end,
}
