-- kong.clustering.snapshot: a snapshot is checked against gateway/local/snapshot.schema.json
-- (errors name the entity and field) and made into the entities Kong's plugins see.
local cjson = require "cjson.safe"
local snapshot = require "kong.clustering.snapshot"

local SERVICE_ID = "11111111-1111-4111-8111-111111111111"
local ROUTE_ID = "22222222-2222-4222-8222-222222222222"

local function doc()
  return {
    snapshot_version = 2,
    config_version = 3,
    config_hash = string.rep("ab", 16),
    certificates = {},
    snis = {},
    services = { {
      id = SERVICE_ID, name = "svc", protocol = "http", host = "localhost", port = 80, path = cjson.null,
      retries = 5, connect_timeout = 60000, write_timeout = 60000, read_timeout = 60000, enabled = true,
      created_at = 1700000000, updated_at = 1700000001, tags = cjson.null,
    } },
    routes = { {
      id = ROUTE_ID, name = cjson.null, service = { id = SERVICE_ID }, protocols = { "http", "https" },
      methods = { "GET" }, hosts = cjson.null, paths = { "/a" }, headers = cjson.null, snis = cjson.null,
      strip_path = true,
      preserve_host = false, regex_priority = 0, path_handling = "v0", https_redirect_status_code = 426,
      request_buffering = true, response_buffering = true, created_at = 1700000000,
      updated_at = 1700000001, tags = { "a" },
    } },
    consumers = {},
    keyauth_credentials = {},
    acls = {},
    plugins = { {
      id = "33333333-3333-4333-8333-333333333333", name = "p", instance_name = cjson.null, enabled = true,
      protocols = { "http" }, route = cjson.null, service = cjson.null, consumer = cjson.null,
      config = { a = cjson.null, nested = { b = cjson.null, c = 1 } },
    } },
  }
end

local function decode(d)
  return snapshot.decode(cjson.encode(d))
end

describe("kong.clustering.snapshot", function()
  it("decodes a snapshot: nulls absent, sets answer t[value]", function()
    local s = assert(decode(doc()))
    local route = s.routes[1]
    assert.is_nil(route.name)
    assert.is_nil(route.hosts)
    assert.is_true(route.protocols.https)
    assert.is_nil(route.protocols.grpc)
    assert.is_true(route.methods.GET)
    assert.equal("http", route.protocols[1])
    assert.is_nil(s.services[1].path)
    assert.same({ nested = { c = 1 } }, s.plugins[1].config)
  end)

  it("refuses a snapshot_version it does not know", function()
    local d = doc()
    d.snapshot_version = 3
    local s, err = decode(d)
    assert.is_nil(s)
    assert.equal("snapshot: snapshot_version 3 is not one this data plane knows (it runs version 2)", err)
  end)

  it("names the entity and the field", function()
    local d = doc()
    d.routes[1].regex_priority = 1.5
    assert.equal('route ' .. ROUTE_ID .. ' (routes[1]): field "regex_priority" must be an integer',
                 select(2, decode(d)))
    d = doc()
    d.services[1].protocol = "grpc"
    assert.equal('service ' .. SERVICE_ID .. ' (services[1]): field "protocol" must be one of "http", "https"',
                 select(2, decode(d)))
    d = doc()
    d.routes[1].surprise = true
    assert.equal('route ' .. ROUTE_ID .. ' (routes[1]): unknown field "surprise"', select(2, decode(d)))
    d = doc()
    d.routes[1].service = nil
    assert.equal('route ' .. ROUTE_ID .. ' (routes[1]): field "service" is missing', select(2, decode(d)))
  end)

  it("refuses references to entities that are not in the snapshot", function()
    local d = doc()
    d.plugins[1].route = { id = "44444444-4444-4444-8444-444444444444" }
    assert.matches('field "route" refers to route 44444444%-4444%-4444%-8444%-444444444444, which is not in the snapshot',
                   select(2, decode(d)))
  end)

  it("checks every type and field as the generated schema declares them (no Lua per entity type)", function()
    local d = doc()
    d.consumers = { { id = "55555555-5555-4555-8555-555555555555", username = "u", custom_id = cjson.null } }
    d.acls = { { id = "66666666-6666-4666-8666-666666666666", consumer = { id = "55555555-5555-4555-8555-555555555555" },
                 group = "g", tags = cjson.null } }
    assert(decode(d))
    d.acls[1].group = nil
    assert.equal('acl 66666666-6666-4666-8666-666666666666 (acls[1]): field "group" is missing', select(2, decode(d)))
    d = doc()
    d.acls = { { id = "66666666-6666-4666-8666-666666666666", consumer = { id = "77777777-7777-4777-8777-777777777777" },
                 group = "g", tags = cjson.null } }
    assert.equal('acl 66666666-6666-4666-8666-666666666666 (acls[1]): field "consumer" refers to consumer '
                 .. '77777777-7777-4777-8777-777777777777, which is not in the snapshot', select(2, decode(d)))
  end)

  it("checks Kong's patterns and sets, and makes every set answer t[value]", function()
    local d = doc()
    d.routes[1].methods = { "get" }
    assert.equal('route ' .. ROUTE_ID .. ' (routes[1]): field "methods" must be an array of a string matching '
                 .. '^[A-Z]+$ (item 1 is not) or null', select(2, decode(d)))
    d = doc()
    d.routes[1].protocols = { "http", "http" }
    assert.equal('route ' .. ROUTE_ID .. ' (routes[1]): field "protocols" must be an array without duplicates (item 2 repeats)',
                 select(2, decode(d)))
    d = doc()
    d.consumers = { { id = "55555555-5555-4555-8555-555555555555", username = "u", custom_id = cjson.null } }
    d.keyauth_credentials = { { id = "88888888-8888-4888-8888-888888888888", key = "k", expires_at = cjson.null,
                                consumer = { id = "55555555-5555-4555-8555-555555555555" }, tags = { "key-hash:sha256" } } }
    local s = assert(decode(d))
    assert.is_true(s.keyauth_credentials[1].tags["key-hash:sha256"])
    assert.equal("key-hash:sha256", s.keyauth_credentials[1].tags[1])
  end)

  it("refuses a bad hash and invalid JSON", function()
    local d = doc()
    d.config_hash = "ABC"
    assert.equal("snapshot: config_hash must be a string matching ^[0-9a-f]{32}$", select(2, decode(d)))
    assert.matches("^snapshot: invalid JSON", select(2, snapshot.decode("{")))
  end)
end)
