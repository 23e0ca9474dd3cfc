-- kong.router: the traditional_compatible router of Kong 3.9.3 (kong/router/atc.lua,
-- kong/router/transform.lua, atc-router 1.6.2 src/router.rs). Cases after
-- spec/01-unit/08-router_spec.lua where they exist.
local router = require "kong.router"
local uuid_v5 = require "kong.router.uuid_v5"

local function id(n)
  return string.format("00000000-0000-4000-8000-%012d", n)
end

local function new(routes)
  local list = {}
  for i, route in ipairs(routes) do
    route.id = route.id or id(i)
    route.strip_path = route.strip_path ~= false
    list[i] = { route = route, service = { id = "svc", host = "127.0.0.1" } }
  end
  return assert(router.new(list))
end

local function select(r, method, path, host, headers)
  local m, matched, captures = r:select(method, path, host, 80, function() return headers or {} end)
  return m and m.route, matched, captures
end

describe("kong.router", function()
  describe("get_priority()", function()
    -- transform.lua shifts plain numbers with LuaJIT's 32-bit bit.lshift (lshift_uint64 assigns
    -- its argument to the upvalue meant for a uint64): weight << 61 is weight << 29
    it("a prefix path: weight 1 << 29 | length", function()
      assert.equal(536870916ULL, router.get_priority({ paths = { "/foo" } }, { "/foo" }))
    end)

    it("a plain host sets bit 60 (a 64-bit constant) above the match weight", function()
      assert.equal(1152921505680588804ULL,
                   router.get_priority({ hosts = { "a.com" }, paths = { "/foo" } }, { "/foo" }))
    end)

    it("a regex path sets bit 51 and regex_priority << 19", function()
      assert.equal(2251800352129024ULL,
                   router.get_priority({ paths = { "~/x" }, regex_priority = 3 }, { "~/x" }))
    end)

    it("regex_priority counts for regex paths only", function()
      assert.equal(router.get_priority({ paths = { "/x" } }, { "/x" }),
                   router.get_priority({ paths = { "/x" }, regex_priority = 9 }, { "/x" }))
    end)
  end)

  describe("select()", function()
    it("the longest prefix wins", function()
      local r = new({ { paths = { "/a" } }, { paths = { "/a/b" } } })
      local route, matched = select(r, "GET", "/a/b/c")
      assert.equal(id(2), route.id)
      assert.equal("/a/b", matched)
    end)

    it("a regex path outranks a prefix path with a method (bit 51 over the match weight)", function()
      local r = new({ { methods = { "GET" }, paths = { "/items" } }, { paths = { "~/items/\\d+$" } } })
      assert.equal(id(2), select(r, "GET", "/items/12").id)
      assert.equal(id(1), select(r, "GET", "/items/ab").id)
    end)

    it("regex paths are anchored at the start; captures come back", function()
      local r = new({ { paths = { "~/users/(?<name>\\w+)/(\\d+)" } } })
      assert.is_nil(select(r, "GET", "/x/users/bob/1"))
      local route, matched, captures = select(r, "GET", "/users/bob/12/more")
      assert.equal(id(1), route.id)
      assert.equal("/users/bob/12", matched)
      assert.equal("bob", captures.name)
      assert.equal("12", captures[2])
    end)

    it("hosts: exact, *.suffix, prefix.*, and host:port", function()
      local r = new({
        { hosts = { "exact.com" } },
        { hosts = { "*.wild.com" } },
        { hosts = { "pre.*" } },
        { hosts = { "port.com:8000" } },
      })
      assert.equal(id(1), select(r, "GET", "/", "exact.com").id)
      assert.equal(id(1), select(r, "GET", "/", "exact.com:1234").id)
      assert.equal(id(2), select(r, "GET", "/", "a.wild.com").id)
      assert.is_nil(select(r, "GET", "/", "wild.com"))
      assert.equal(id(3), select(r, "GET", "/", "pre.org").id)
      assert.is_nil(select(r, "GET", "/", "port.com"))
      assert.equal(id(4), select(r, "GET", "/", "port.com:8000").id)
    end)

    it("a plain host outranks a wildcard one (spec: does not take precedence over a plain host)", function()
      local r = new({ { hosts = { "*.route.com" } }, { hosts = { "plain.route.com" } } })
      assert.equal(id(2), select(r, "GET", "/", "plain.route.com").id)
      assert.equal(id(1), select(r, "GET", "/", "other.route.com").id)
    end)

    it("headers: any value, lower-cased; ~* regexes; more headers first", function()
      local r = new({
        { headers = { version = { "v1" } }, paths = { "/my-route/hello" } },
        { headers = { version = { "v1" }, location = { "us-east" } }, paths = { "/my-route" } },
        { headers = { tenant = { "~*^acme-\\d+$" } } },
      })
      -- spec/01-unit/08-router_spec.lua "more [headers] has priority over longer [paths]"
      assert.equal(id(2), select(r, "GET", "/my-route/hello", nil, { version = "V1", location = "us-east" }).id)
      assert.equal(id(1), select(r, "GET", "/my-route/hello", nil, { version = { "v0", "v1" } }).id)
      assert.equal(id(3), select(r, "GET", "/", nil, { tenant = "ACME-7" }).id)
      assert.is_nil(select(r, "GET", "/", nil, { tenant = "acme-x" }))
    end)

    it("equal priorities: the greater matcher id first", function()
      local r = new({ { id = id(7), paths = { "/same" } }, { id = id(9), paths = { "/same" } } })
      assert.equal(id(9), select(r, "GET", "/same").id)
    end)

    it("paths of different lengths and regexes become separate matchers (split_routes_and_services_by_path)", function()
      local r = new({ { id = id(1), paths = { "/a", "/bb", "~/c+" } } })
      assert.equal(3, r.n)
      local ids = {}
      for _, m in ipairs(r.matchers) do
        ids[m.id] = true
      end
      assert.is_true(ids[uuid_v5("7f145bf9-0dce-4f91-98eb-debbce4b9f6b", id(1) .. "#1")])
      assert.is_true(ids[uuid_v5("7f145bf9-0dce-4f91-98eb-debbce4b9f6b", id(1) .. "#3")])
    end)

    it("a route without paths matches any path and reports no matched path", function()
      local r = new({ { methods = { "GET" } } })
      local route, matched = select(r, "GET", "/anything")
      assert.equal(id(1), route.id)
      assert.is_nil(matched)
      assert.is_nil(select(r, "POST", "/anything"))
    end)

    it("refuses a regex PCRE cannot compile, naming the route", function()
      local ok, err = router.new({ { route = { id = id(1), paths = { "~/(" } } } })
      assert.is_nil(ok)
      assert.matches("route " .. id(1) .. ": invalid regex path", err, 1, true)
    end)
  end)

  -- kong/router/atc.lua exec: matches and misses kept by the request's routed fields
  describe("select()'s match cache", function()
    it("answers a repeated request from the cache: the same match, its misses too", function()
      local r = new({ { paths = { "/a" }, hosts = { "a.com" } }, { paths = { "~/items/(?<n>\\d+)" } } })
      local first = { r:select("GET", "/items/12", "b.com", 80, nil, "http") }
      assert.equal(id(2), first[1].route.id)
      assert.equal("12", first[3].n)
      local again = { r:select("GET", "/items/12", "b.com", 80, nil, "http") }
      assert.same(first, again)
      assert.equal(first[1], again[1])
      assert.is_nil(r:select("GET", "/b", "a.com", 80, nil, "http"))
      assert.is_nil(r:select("GET", "/b", "a.com", 80, nil, "http"))
      assert.equal(2, r.cached)
    end)

    it("keys by method, host, port, scheme, server name and path", function()
      local r = new({
        { paths = { "/a" }, hosts = { "a.com" }, methods = { "GET" } },
        { paths = { "/a" }, snis = { "s.com" } },
      })
      assert.equal(id(1), r:select("GET", "/a", "a.com", 80, nil, "http").route.id)
      assert.equal(id(2), r:select("POST", "/a", "a.com", 80, nil, "http").route.id)
      assert.equal(id(1), r:select("GET", "/a", "a.com", 80, nil, "https", "x.com").route.id)
      assert.is_nil(r:select("GET", "/a", "b.com", 80, nil, "https", "x.com"))
      assert.equal(id(2), r:select("GET", "/a", "b.com", 80, nil, "https", "s.com").route.id)
      assert.equal(id(2), r:select("GET", "/a", "b.com", 80, nil, "http").route.id)
      assert.is_nil(r:select("GET", "/b", "b.com", 80, nil, "http"))
      assert.equal(7, r.cached)
    end)

    it("stays bounded: past 5000 entries it starts over", function()
      local r = new({ { paths = { "/" } } })
      for i = 1, 5000 do
        r:select("GET", "/p" .. i, nil, 80, nil, "http")
      end
      assert.equal(5000, r.cached)
      r:select("GET", "/one-more", nil, 80, nil, "http")
      assert.equal(1, r.cached)
      assert.is_nil(r.cache["GET||80|http||/p1"])
    end)

    it("is not used when a route has header conditions", function()
      local r = new({ { paths = { "/a" }, headers = { version = { "v1" } } } })
      assert.equal(id(1), select(r, "GET", "/a", nil, { version = "v1" }).id)
      assert.is_nil(select(r, "GET", "/a", nil, { version = "v2" }))
      assert.equal(0, r.cached)
    end)
  end)

  describe("request_path()", function()
    it("strips the query and normalizes with merged slashes", function()
      assert.equal("/a/c", router.request_path("/a//b/../c?x=1"))
      assert.equal("/~x", router.request_path("/%7Ex"))
    end)
  end)

  describe("uuid_v5()", function()
    it("matches RFC 4122 name-based UUIDs (python: uuid5(NAMESPACE_DNS, 'python.org'))", function()
      assert.equal("886313e1-3b8a-5372-9b90-0c9aee199e5d", uuid_v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org"))
    end)
  end)
end)
