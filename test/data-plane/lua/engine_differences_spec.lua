-- Where the data plane's engine differs from Kong 3.9.3's OpenResty 1.25.3.2 (nginx 1.25.3,
-- ngx_lua 0.10.26, lua-resty-core 0.1.28, its lua-cjson and bundled lua-resty-* libraries), in
-- what a plugin can see. Each case is a row of docs/known-differences.md:
-- it asserts the difference, so a row that stops being true fails here and leaves the table.

describe("known differences from Kong's OpenResty", function()
  -- An `openresty` binary on PATH runs instead of Debian's nginx when present: then these rows
  -- are OpenResty's own behaviour, and only the versions are checked.
  local debian = ngx.config.ngx_lua_version < 10026

  it("runs nginx 1.22 with ngx_lua 0.10.23 (Kong: nginx 1.25.3, ngx_lua 0.10.26)", function()
    if not debian then
      assert.is_true(ngx.config.nginx_version >= 1025003)
      return
    end
    assert.equal(1022001, ngx.config.nginx_version)
    assert.equal(10023, ngx.config.ngx_lua_version)
  end)

  it("lua-resty-core 0.1.25 has no ngx.balancer.enable_keepalive (Kong's upstream pools)", function()
    if not debian then return end
    assert.is_nil(require("ngx.balancer").enable_keepalive)
  end)

  it("Debian's lua-cjson has no empty_array or array_mt; kong.tools.cjson adds them", function()
    if not debian then return end
    local cjson = require "cjson"
    assert.is_nil(cjson.empty_array)
    assert.is_nil(cjson.array_mt)
    local kong_cjson = require "kong.tools.cjson"
    assert.equal("[]", kong_cjson.encode(kong_cjson.empty_array))
  end)

  it("lua-kong-nginx-module's resty.kong.* modules are absent", function()
    if not debian then return end
    for _, name in ipairs({ "resty.kong.var", "resty.kong.tls", "resty.kong.grpc", "resty.kong.peer_conn" }) do
      assert.is_false((pcall(require, name)), name)
    end
  end)

  it("OpenResty's bundled lua-resty-* libraries are absent, but for our resty.sha256, resty.string and resty.redis", function()
    if not debian then return end
    for _, name in ipairs({ "resty.http", "resty.lock", "resty.openssl", "resty.mlcache", "resty.healthcheck", "resty.aes", "resty.md5" }) do
      assert.is_false((pcall(require, name)), name)
    end
    for _, name in ipairs({ "resty.sha256", "resty.string", "resty.redis", "resty.lrucache", "resty.core" }) do
      assert.is_true((pcall(require, name)), name)
    end
  end)
end)
