-- kong.node (kong/pdk/node.lua, 3.9.3): this node's id (kong_conf.json node_id), hostname and
-- memory: each worker's Lua VM (the `kong:mem:<pid>` entries each worker writes in the `kong`
-- shared dict, see kong.runloop.handler) and each shared dict's capacity and allocated slabs.
local ffi = require "ffi"
require "resty.core.shdict" -- capacity() and free_space()

local C = ffi.C
local ngx = ngx
local fmt = string.format
local lower = string.lower
local match = string.match
local floor = math.floor
local type = type
local pcall = pcall
local tonumber = tonumber
local sort = table.sort

ffi.cdef [[
int gethostname(char *name, size_t len);
]]

local hostname

-- the dicts, listed once (nginx declares them all before init)
local shms = {}
for name, dict in pairs(ngx.shared) do
  shms[#shms + 1] = { name = name, zone = dict, capacity = dict:capacity() }
end

--- kong/tools/string.lua bytes_to_str: bytes as a number ("b") or text in KiB, MiB or GiB.
local function bytes_to_str(bytes, unit, scale)
  local u = lower(unit or "")
  if u == "" or u == "b" then
    return fmt("%d", bytes)
  end
  scale = scale or 2
  if type(scale) ~= "number" or scale < 0 then
    error("scale must be equal or greater than 0", 2)
  end
  local spec = fmt("%%.%df", scale)
  if u == "k" then
    return fmt(spec .. " KiB", bytes / 2 ^ 10)
  elseif u == "m" then
    return fmt(spec .. " MiB", bytes / 2 ^ 20)
  elseif u == "g" then
    return fmt(spec .. " GiB", bytes / 2 ^ 30)
  end
  error("invalid unit '" .. tostring(unit) .. "' (expected 'k/K', 'm/M', or 'g/G')", 2)
end

local function convert_bytes(bytes, unit, scale)
  if not unit or lower(unit) == "b" then
    return floor(bytes)
  end
  return bytes_to_str(bytes, unit, scale)
end

local function by_pid(a, b)
  return a.pid < b.pid
end

return {
  bytes_to_str = bytes_to_str,

  new = function(self)
    local node = {}

    function node.get_id()
      return self.configuration.node_id
    end

    function node.get_hostname()
      if not hostname then
        local size = 253
        local buf = ffi.new("unsigned char[?]", size)
        if C.gethostname(buf, size) ~= 0 then
          error("could not get hostname")
        end
        hostname = ffi.string(buf):gsub("%z+$", "")
      end
      return hostname
    end

    --- kong.node.get_memory_stats([unit [, scale]]): { workers_lua_vms = { { pid,
    -- http_allocated_gc }... }, lua_shared_dicts = { [name] = { capacity, allocated_slabs } } },
    -- in bytes (numbers) or, with a unit, text such as "1.25 MiB".
    function node.get_memory_stats(unit, scale)
      unit = unit or "b"
      scale = scale or 2
      local ok, err = pcall(bytes_to_str, 0, unit, scale)
      if not ok then
        error(err, 2)
      end

      local res = { workers_lua_vms = {}, lua_shared_dicts = {} }
      local kong_shm = ngx.shared.kong
      local keys
      keys, err = kong_shm:get_keys()
      if not keys then
        res.workers_lua_vms.err = "could not get kong shm keys: " .. tostring(err)
      else
        for i = 1, #keys do
          local pid = match(keys[i], "^kong:mem:(%d+)$")
          if pid then
            local count = kong_shm:get(keys[i])
            local w = { pid = tonumber(pid) }
            if type(count) == "number" then
              w.http_allocated_gc = convert_bytes(count * 1024, unit, scale) -- kilobytes in the dict
            else
              w.err = "could not get worker's HTTP Lua VM memory (pid: " .. pid .. "): reported value is corrupted"
            end
            res.workers_lua_vms[#res.workers_lua_vms + 1] = w
          end
        end
        sort(res.workers_lua_vms, by_pid)
      end

      for _, shm in ipairs(shms) do
        res.lua_shared_dicts[shm.name] = {
          capacity = convert_bytes(shm.capacity, unit, scale),
          allocated_slabs = convert_bytes(shm.capacity - shm.zone:free_space(), unit, scale),
        }
      end
      return res
    end

    return node
  end,
}
