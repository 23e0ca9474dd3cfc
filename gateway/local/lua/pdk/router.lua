-- kong.router (kong/pdk/router.lua) and kong.node (kong/pdk/node.lua).
local bridge = require "pdk.bridge"
local phase = require "pdk.phase"

local FS = bridge.FS
local read = phase.read

local router = {}

--- "id FS name" as the host sends an entity: { id, name } (name nil when empty).
local function entity(s)
  if not s then return nil end
  local sep = s:find(FS, 1, true)
  local name = s:sub(sep + 1)
  return { id = s:sub(1, sep - 1), name = name ~= "" and name or nil }
end

function router.get_route() return entity(read("route")) end
function router.get_service() return entity(read("service")) end

local node = {}
function node.get_id() return read("node_id") end

return { router = router, node = node }
