-- kong.runloop.plugins_iterator: Kong 3.9.3's lookup_cfg precedence (kong/runloop/
-- plugins_iterator.lua, spec/01-unit/19-hybrid/... and spec/02-integration/07-sdk) per route
-- plan, and the order of kong/db/dao/plugins.lua sort_by_handler_priority.
local iterator = require "kong.runloop.plugins_iterator"

local ROUTE, SERVICE = { id = "r" }, { id = "s" }
local ALICE = { id = "alice" }

local function plugin(name, priority, extra)
  local handler = { PRIORITY = priority, access = function() end, log = function() end }
  for k, v in pairs(extra or {}) do
    handler[k] = v
  end
  return { name = name, handler = handler }
end

local function instance(name, tag, route, service, consumer)
  return {
    id = tag, name = name, enabled = true, protocols = { "http", "https" },
    route = route and { id = route.id }, service = service and { id = service.id },
    consumer = consumer and { id = consumer.id }, config = { tag = tag },
  }
end

local function tags_for(plugins_data, consumer)
  local plan = plugins_data:plan(ROUTE, SERVICE)
  local out = {}
  for i = 1, plan.n do
    local cfg = iterator.config_for(plan.entries[i], consumer)
    out[#out + 1] = cfg and (plan.entries[i].plugin.name .. "=" .. cfg.tag) or (plan.entries[i].plugin.name .. "=-")
  end
  return table.concat(out, ",")
end

describe("kong.runloop.plugins_iterator", function()
  it("lookup_cfg: RSC, RC, SC, RS, C, R, S, G", function()
    local loaded = { plugin("p", 10) }
    local all = {
      instance("p", "G"), instance("p", "S", nil, SERVICE), instance("p", "R", ROUTE),
      instance("p", "C", nil, nil, ALICE), instance("p", "RS", ROUTE, SERVICE),
      instance("p", "SC", nil, SERVICE, ALICE), instance("p", "RC", ROUTE, nil, ALICE),
      instance("p", "RSC", ROUTE, SERVICE, ALICE),
    }
    local expected = { "RSC", "RC", "SC", "RS", "C", "R", "S", "G" }
    for i = 1, #expected do
      local data = assert(iterator.new(loaded, { unpack(all, 1, #all - i + 1) }))
      assert.equal("p=" .. expected[i], tags_for(data, ALICE))
    end
    local data = assert(iterator.new(loaded, all))
    assert.equal("p=RS", tags_for(data, nil))
    assert.equal("p=RS", tags_for(data, { id = "bob" }))
  end)

  it("no_consumer / no_route / no_service handlers ignore instances on that entity", function()
    local loaded = { plugin("nc", 10, { no_consumer = true }), plugin("nr", 9, { no_route = true }) }
    local data = assert(iterator.new(loaded, {
      instance("nc", "C", nil, nil, ALICE), instance("nc", "G"),
      instance("nr", "R", ROUTE), instance("nr", "S", nil, SERVICE),
    }))
    assert.equal("nc=G,nr=S", tags_for(data, ALICE))
  end)

  it("a plugin with no instance for the route is left out of its plan", function()
    local loaded = { plugin("a", 10), plugin("b", 5) }
    local data = assert(iterator.new(loaded, { instance("b", "elsewhere", { id = "other" }) }))
    assert.equal(0, data:plan(ROUTE, SERVICE).n)
  end)

  it("only consumer instances: in the plan, with no configuration until that consumer", function()
    local data = assert(iterator.new({ plugin("p", 1) }, { instance("p", "C", nil, nil, ALICE) }))
    assert.equal("p=-", tags_for(data, nil))
    assert.equal("p=C", tags_for(data, ALICE))
  end)

  it("disabled instances and instances of other subsystems do not count", function()
    local off = instance("p", "off")
    off.enabled = false
    local tcp = instance("p", "tcp", ROUTE)
    tcp.protocols = { "tcp" }
    local data = assert(iterator.new({ plugin("p", 1) }, { off, tcp }))
    assert.is_false(data.has_plugins)
  end)

  it("adds Kong's fields to a configuration (get_plugin_config)", function()
    local data = assert(iterator.new({ plugin("p", 1) }, { instance("p", "RS", ROUTE, SERVICE) }))
    local cfg = data:plan(ROUTE, SERVICE).entries[1].base
    assert.equal("r", cfg.route_id)
    assert.equal("s", cfg.service_id)
    assert.equal("RS", cfg.__plugin_id)
    assert.equal("plugins:p:r:s:::", cfg.__key__)
  end)

  it("an instance of a plugin the node did not load is an error", function()
    local ok, err = iterator.new({}, { instance("ghost", "x") })
    assert.is_nil(ok)
    assert.equal("plugin x: ghost plugin is in use but not enabled", err)
  end)

  it("global lists per phase for requests without a route", function()
    local data = assert(iterator.new({ plugin("p", 1) }, { instance("p", "G"), instance("p", "R", ROUTE) }))
    local log = data:global_list("log")
    assert.equal(2, #log)
    assert.equal("G", log[2].tag)
    assert.equal(0, #data:global_list("rewrite"))
  end)
end)
