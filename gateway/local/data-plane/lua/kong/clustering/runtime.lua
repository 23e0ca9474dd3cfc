-- A worker's runtime: what it builds from a snapshot to serve requests (the router, the
-- plugins' plans, the entity indexes), and the one it serves now.
local router = require "kong.router"
local plugins_iterator = require "kong.runloop.plugins_iterator"
local entities = require "kong.runloop.entities"
local certificate = require "kong.runloop.certificate"

local ipairs = ipairs

local runtime = {}

local current = nil

--- Builds a runtime from a decoded snapshot; nil and the reason when it cannot run it.
-- `loaded` is the node's loaded plugins (kong.runloop.plugins_loader).
function runtime.build(snapshot, loaded)
  local services = {}
  for _, service in ipairs(snapshot.services) do
    services[service.id] = service
  end

  local routes_and_services = {}
  for _, route in ipairs(snapshot.routes) do
    local service = route.service and services[route.service.id]
    -- routes of disabled services are left out of the router (kong/runloop/handler.lua new_router)
    if not service or service.enabled ~= false then
      routes_and_services[#routes_and_services + 1] = { route = route, service = service }
    end
  end

  local new_router, err = router.new(routes_and_services)
  if not new_router then
    return nil, err
  end

  local plugins
  plugins, err = plugins_iterator.new(loaded, snapshot.plugins)
  if not plugins then
    return nil, err
  end

  return {
    hash = snapshot.config_hash,
    version = snapshot.config_version,
    router = new_router,
    plugins = plugins,
    entities = entities.build(snapshot),
    certificates = certificate.build(snapshot),
  }
end

function runtime.install(rt)
  current = rt
  entities.install(rt.entities)
end

function runtime.current()
  return current
end

return runtime
