-- kong.runloop.handler: the pieces of Kong 3.9.3's kong/runloop/handler.lua and
-- kong/router/utils.lua that need no request.
local handler = require "kong.runloop.handler"

describe("kong.runloop.handler", function()
  it("csv_tokens: Connection / TE tokens, lower-cased, blanks dropped", function()
    assert.same({ "x-a", "x-b" }, handler.csv_tokens("X-A, ,x-b"))
    assert.same({}, handler.csv_tokens("close"))
    assert.same({}, handler.csv_tokens(nil))
  end)

  it("upstream_uri: the service path joined with what the route left (get_upstream_uri_v0)", function()
    local route = { strip_path = true }
    assert.equal("/srv/req", handler.upstream_uri(route, { path = "/srv" }, "/rou", "/roureq"))
    assert.equal("/srv", handler.upstream_uri(route, { path = "/srv/" }, "/rou", "/rou"))
    assert.equal("/", handler.upstream_uri(route, { path = nil }, "/route", "/route/"))
    local kept, prefix = handler.upstream_uri({ strip_path = false }, { path = "/service" }, "/route", "/routereq")
    assert.equal("/service/routereq", kept)
    assert.is_nil(prefix)
  end)
end)
