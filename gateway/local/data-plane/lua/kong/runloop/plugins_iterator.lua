-- kong/runloop/plugins_iterator.lua (3.9.3): which plugin configurations run for a request, and
-- in which order. Plugins run by PRIORITY (descending; equal priorities by name, descending:
-- kong/db/dao/plugins.lua sort_by_handler_priority). For each plugin the most specific
-- instance applies (lookup_cfg): route+service+consumer, route+consumer, service+consumer,
-- route+service, consumer, route, service, global; a handler with no_route / no_service /
-- no_consumer (from its schema) ignores instances on that entity.
--
-- Kong looks the instances up per request; here the consumer-independent part is computed once
-- per route and snapshot (a "plan"), so a request only looks up consumer-specific instances,
-- and only for plugins that have some.
local tablepool = require "kong.tools.tablepool"
local plugin_runners = require "kong.runloop.plugin_runners"

local ipairs = ipairs
local pairs = pairs

local DOWNSTREAM_PHASES = { "response", "header_filter", "body_filter", "log" }
local GLOBAL_PHASES = { "rewrite", "response", "header_filter", "body_filter", "log" }
local HTTP_PROTOCOLS = { http = true, https = true, grpc = true, grpcs = true }

local EMPTY = {}

local iterator = {}

--- The instances of the snapshot's plugins, by plugin name and scope.
local function new_combos()
  return {
    global = nil,
    route = {},
    service = {},
    route_service = {},
    -- consumer id → { global, route = {}, service = {}, route_service = {} }
    consumer = nil,
  }
end

local function place(scopes, route_id, service_id, cfg)
  if route_id and service_id then
    local by_service = scopes.route_service[route_id]
    if not by_service then
      by_service = {}
      scopes.route_service[route_id] = by_service
    end
    by_service[service_id] = cfg
  elseif route_id then
    scopes.route[route_id] = cfg
  elseif service_id then
    scopes.service[service_id] = cfg
  else
    scopes.global = cfg
  end
end

local function cache_key(name, route_id, service_id, consumer_id)
  return "plugins:" .. name .. ":" .. (route_id or "") .. ":" .. (service_id or "") .. ":" .. (consumer_id or "") .. "::"
end

--- The plugins data of a snapshot: `loaded` is the node's loaded plugins (sorted), `plugins` the
-- snapshot's instances (nulls removed). Instances of a plugin the node did not load are an
-- error, as Kong's "plugin is in use but not enabled".
function iterator.new(loaded, plugins)
  local by_name = {}
  for _, plugin in ipairs(loaded) do
    by_name[plugin.name] = plugin
  end

  local combos = {}
  local has_plugins = false

  for _, instance in ipairs(plugins) do
    local name = instance.name
    local plugin = by_name[name]
    if not plugin then
      return nil, "plugin " .. instance.id .. ": " .. name .. " plugin is in use but not enabled"
    end

    local http = false
    for _, protocol in ipairs(instance.protocols) do
      http = http or HTTP_PROTOCOLS[protocol] ~= nil
    end

    if instance.enabled and http then
      has_plugins = true
      local route_id = instance.route and instance.route.id
      local service_id = instance.service and instance.service.id
      local consumer_id = instance.consumer and instance.consumer.id

      -- kong/runloop/plugins_iterator.lua get_plugin_config: what Kong adds to a config
      local cfg = instance.config
      cfg.route_id = route_id
      cfg.service_id = service_id
      cfg.consumer_id = consumer_id
      cfg.plugin_instance_name = instance.instance_name
      cfg.__plugin_id = instance.id
      cfg.__key__ = cache_key(name, route_id, service_id, consumer_id)
      cfg.__seq__ = 0

      local c = combos[name]
      if not c then
        c = new_combos()
        combos[name] = c
      end

      if consumer_id then
        c.consumer = c.consumer or {}
        local scopes = c.consumer[consumer_id]
        if not scopes then
          scopes = { route = {}, service = {}, route_service = {} }
          c.consumer[consumer_id] = scopes
        end
        place(scopes, route_id, service_id, cfg)
      else
        place(c, route_id, service_id, cfg)
      end
    end
  end

  -- the loaded plugins that have instances, in execution order
  local ordered = {}
  local globals = {}
  for _, phase in ipairs(GLOBAL_PHASES) do
    globals[phase] = {}
  end
  for _, plugin in ipairs(loaded) do
    local c = combos[plugin.name]
    if c then
      ordered[#ordered + 1] = plugin
      if c.global then
        for _, phase in ipairs(GLOBAL_PHASES) do
          if plugin.handler[phase] then
            local list = globals[phase]
            list[#list + 1] = plugin
            list[#list + 1] = c.global
          end
        end
      end
    end
  end

  return setmetatable({
    has_plugins = has_plugins,
    combos = combos,
    ordered = ordered,
    globals = globals,
    plans = {},
  }, { __index = iterator })
end

--- Global instances' handlers for a phase when no route was collected (no match, or an exit in
-- rewrite): a flat list plugin, config, plugin, config...
function iterator:global_list(phase)
  return self.globals[phase] or EMPTY
end

local function first_of(scopes, route_id, service_id)
  if not scopes then
    return nil
  end
  local cfg
  if route_id and service_id then
    local by_service = scopes.route_service[route_id]
    cfg = by_service and by_service[service_id]
  end
  if not cfg and route_id then
    cfg = scopes.route[route_id]
  end
  if not cfg and service_id then
    cfg = scopes.service[service_id]
  end
  return cfg
end

--- The plan for requests matched to `route` (with `service`, possibly nil).
function iterator:plan(route, service)
  local key = route.id
  local plan = self.plans[key]
  if plan then
    return plan
  end

  local entries = {}
  local consumer_sensitive = false
  local phases = { access = {} }
  for _, phase in ipairs(DOWNSTREAM_PHASES) do
    phases[phase] = {}
  end

  for _, plugin in ipairs(self.ordered) do
    local handler = plugin.handler
    local c = self.combos[plugin.name]
    local route_id = not handler.no_route and route.id or nil
    local service_id = not handler.no_service and service and service.id or nil

    -- lookup_cfg without a consumer: route+service, then route, service, global
    local rs
    if route_id and service_id then
      local by_service = c.route_service[route_id]
      rs = by_service and by_service[service_id]
    end
    local rest = (route_id and c.route[route_id]) or (service_id and c.service[service_id]) or c.global

    -- with a consumer: its route+service, route and service instances come before route+service;
    -- its global one between route+service and the rest
    local specific, consumer_global
    if c.consumer and not handler.no_consumer then
      for consumer_id, scopes in pairs(c.consumer) do
        local cfg = first_of(scopes, route_id, service_id)
        if cfg then
          specific = specific or {}
          specific[consumer_id] = cfg
        end
        if scopes.global then
          consumer_global = consumer_global or {}
          consumer_global[consumer_id] = scopes.global
        end
      end
    end

    local base = rs or rest
    if base or specific or consumer_global then
      local i = #entries + 1
      entries[i] = {
        plugin = plugin,
        base = base or false,
        rs = rs,
        rest = rest,
        specific = specific or EMPTY,
        consumer_global = consumer_global or EMPTY,
        sensitive = specific ~= nil or consumer_global ~= nil,
      }
      consumer_sensitive = consumer_sensitive or specific ~= nil or consumer_global ~= nil
      if handler.access then
        phases.access[#phases.access + 1] = i
      end
      for _, phase in ipairs(DOWNSTREAM_PHASES) do
        if handler[phase] then
          local list = phases[phase]
          list[#list + 1] = i
        end
      end
    end
  end

  local base_cfgs = {}
  for i, entry in ipairs(entries) do
    base_cfgs[i] = entry.base
  end

  -- each downstream phase's handlers as one straight-line function (the access phase's runner
  -- is made by kong/init.lua, which owns its collection)
  local runners = {}
  for _, phase in ipairs(DOWNSTREAM_PHASES) do
    runners[phase] = plugin_runners.phase(phase, entries, phases[phase])
  end

  plan = {
    entries = entries,
    n = #entries,
    consumer_sensitive = consumer_sensitive,
    base_cfgs = base_cfgs,
    phases = phases,
    runners = runners,
  }
  self.plans[key] = plan
  return plan
end

--- The configuration of a plan entry for a request, given the consumer authenticated so far.
function iterator.config_for(entry, consumer)
  if consumer and entry.sensitive then
    local id = consumer.id
    return entry.specific[id] or entry.rs or entry.consumer_global[id] or entry.rest or false
  end
  return entry.base
end

--- An array for one request's configurations (when they depend on the consumer); back to the
-- pool in the log phase.
function iterator.fetch_cfgs(n)
  return tablepool.fetch("plugins_cfgs", n, 0)
end

function iterator.release_cfgs(cfgs)
  tablepool.release("plugins_cfgs", cfgs)
end

iterator.DOWNSTREAM_PHASES = DOWNSTREAM_PHASES

return iterator
