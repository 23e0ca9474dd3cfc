-- kong.tools.uri: Kong 3.9.3's spec/01-unit/18-tools_uri_spec.lua cases, on this data plane's
-- implementation.
local uri = require "kong.tools.uri"

describe("kong.tools.uri", function()
  describe("normalize()", function()
    it("no normalization necessary", function()
      assert.equal("", uri.normalize(""))
      assert.equal("/", uri.normalize("/"))
      assert.equal("/a", uri.normalize("/a"))
      assert.equal("/a/", uri.normalize("/a/"))
      assert.equal("/a/b/c", uri.normalize("/a/b/c"))
      assert.equal("/a/b/c/", uri.normalize("/a/b/c/"))
    end)

    it("leaves reserved characters encoded", function()
      assert.equal("/a%2Fb%2Fc/", uri.normalize("/a%2Fb%2Fc/"))
      assert.equal("/ %21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
                   uri.normalize("/%20%21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D"))
    end)

    it("upper-cases the triplets it keeps", function()
      assert.equal("/a%2Fb%2Fc/", uri.normalize("/a%2fb%2fc/"))
      assert.equal("/foo", uri.normalize("/f%6f%6f"))
    end)

    it("decodes unreserved characters", function()
      assert.equal("/kong", uri.normalize("/%6B%6f%6e%67"))
      assert.equal("/", uri.normalize("/%2E"))
    end)

    it("removes dot segments", function()
      assert.equal("//", uri.normalize("//"))
      assert.equal("/", uri.normalize("/./"))
      assert.equal("/", uri.normalize("/."))
      assert.equal("/", uri.normalize("/.."))
      assert.equal("/", uri.normalize("/../"))
      assert.equal("/////", uri.normalize("/////"))
      assert.equal("/", uri.normalize("/./.././../"))
      assert.equal("/a/g", uri.normalize("/a/b/c/./../../g"))
      assert.equal("mid/6", uri.normalize("mid/content=5/../6"))
    end)

    it("merges slashes when asked", function()
      assert.equal("/", uri.normalize("//", true))
      assert.equal("/", uri.normalize("/////", true))
      assert.equal("/a/b/", uri.normalize("/a//b//", true))
    end)

    it("decodes non-ASCII characters (issue #2366)", function()
      assert.equal("/endeløst", uri.normalize("/endel%C3%B8st"))
    end)

    it("normalizes a uri with characters outside the uri charset", function()
      assert.equal("/ä/a./a/_\x99\xaf%2F%2F",
                   uri.normalize("/%C3%A4/a/%2e./a%2E//a/%2e/./a/../a/%2e%2E/%5f%99%af%2f%2F", true))
    end)
  end)

  describe("escape()", function()
    it("keeps reserved and unreserved characters, and %", function()
      local s = "/!#$%&'()*+,/:;=?@[]ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~"
      assert.equal(s, uri.escape(s))
    end)

    it("escapes spaces and UTF-8", function()
      assert.equal("/a%20b/c%20d", uri.escape("/a b/c d"))
      assert.equal("/a%F0%9F%98%80", uri.escape("/a😀"))
      assert.equal("/endel%C3%B8st", uri.escape("/endeløst"))
    end)
  end)
end)
