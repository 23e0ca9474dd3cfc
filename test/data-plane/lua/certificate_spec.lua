-- kong.runloop.certificate: the wildcard SNIs a server name is looked up under, transcribed from
-- Kong 3.9.3's spec/01-unit/24-runloop_certificate_spec.lua (line of each case in its name), and
-- the order of the lookup (kong/runloop/certificate.lua find_certificate).
local certificate = require "kong.runloop.certificate"
local produce_wild_snis = certificate.produce_wild_snis

describe("kong.runloop.certificate", function()
  describe("produce_wild_snis", function()
    it("throws an error when arg is not a string (:7)", function()
      assert.has_error(function()
        produce_wild_snis()
      end, "sni must be a string")
    end)

    it("produces suffix wildcard SNI (:13)", function()
      local prefix, suffix = produce_wild_snis("domain.test")
      assert.is_nil(prefix)
      assert.equal("domain.*", suffix)
    end)

    it("produces prefix and suffix wildcard SNIs (:19)", function()
      local prefix, suffix = produce_wild_snis("www.domain.test")
      assert.equal("*.domain.test", prefix)
      assert.equal("www.domain.*", suffix)
    end)

    it("produces prefix and suffix wildcard SNIs on sub-subnames (:25)", function()
      local prefix, suffix = produce_wild_snis("foo.www.domain.test")
      assert.equal("*.www.domain.test", prefix)
      assert.equal("foo.www.domain.*", suffix)
    end)

    it("does not produce wildcard SNIs when input is wildcard (:31)", function()
      local prefix, suffix = produce_wild_snis("*.domain.test")
      assert.equal("*.domain.test", prefix)
      assert.is_nil(suffix)

      prefix, suffix = produce_wild_snis("domain.*")
      assert.is_nil(prefix)
      assert.equal("domain.*", suffix)
    end)
  end)

  describe("find", function()
    local index = certificate.build({
      certificates = { { id = "exact" }, { id = "prefix" }, { id = "suffix" }, { id = "catch-all" } },
      snis = {
        { name = "a.example.test", certificate = { id = "exact" } },
        { name = "*.example.test", certificate = { id = "prefix" } },
        { name = "a.example.*", certificate = { id = "suffix" } },
        { name = "b.other.*", certificate = { id = "suffix" } },
        { name = "*", certificate = { id = "catch-all" } },
      },
    })

    it("looks up the exact name, then the prefix wildcard, then the suffix one, then '*'", function()
      assert.equal("exact", certificate.find(index, "a.example.test").id)
      assert.equal("prefix", certificate.find(index, "b.example.test").id)
      assert.equal("suffix", certificate.find(index, "b.other.test").id)
      assert.equal("catch-all", certificate.find(index, "unknown.test").id)
    end)

    it("leaves the default certificates to a client that sends no name", function()
      assert.is_nil(certificate.find(index, nil))
    end)
  end)
end)
