-- kong.runloop.plugins_loader.load_handler: a handler's VERSION as Kong 3.9.3 checks and keeps it
-- (kong/db/dao/plugins.lua:146-156,190-197): the `version` rock 1.0.1's relaxed parse, the first
-- run of digits and dots (its spec/tests.lua), refused without one, with an empty element or
-- with a fourth; the handler keeps tostring of the parsed numbers.
local loader = require "kong.runloop.plugins_loader"

local function loaded_version(v)
  local name = "version-probe"
  package.loaded["kong.plugins." .. name .. ".handler"] = { PRIORITY = 1, VERSION = v, access = function() end }
  local handler, err = loader.load_handler(name)
  package.loaded["kong.plugins." .. name .. ".handler"] = nil
  return handler and handler.VERSION, err
end

describe("kong.runloop.plugins_loader VERSION", function()
  it("keeps the numeric part as Kong does", function()
    local cases = {
      ["1.2.3"] = "1.2.3",
      ["1.0"] = "1.0",           -- not completed to 1.0.0
      ["1"] = "1",
      ["0.1-t"] = "0.1",         -- spec/fixtures/custom_plugins/kong/plugins/ctx-checker/handler.lua:13
      ["v1.2.3"] = "1.2.3",
      ["1.2.3-beta.1"] = "1.2.3",
      ["text 1.0 text 2.0"] = "1.0",
      ["1."] = "1",              -- a trailing dot adds no element
      ["1.2.3."] = "1.2.3",
      ["1.x"] = "1",
      ["01.002.3"] = "1.2.3",
    }
    for v, expected in pairs(cases) do
      assert.equal(expected, (loaded_version(v)), v)
    end
  end)

  it("refuses no number, an empty element, a fourth element or a non-string", function()
    for _, v in ipairs({ "", "x.y.z", "1..2", "1.2..", "1.2.3.4", "v1.2.3.4-rc", 123 }) do
      local version, err = loaded_version(v)
      assert.is_nil(version, tostring(v))
      assert.equal('Plugin "version-probe" cannot be loaded because its VERSION field does not follow the "x.y.z" format, got: "'
                   .. tostring(v) .. '".\n', err)
    end
  end)
end)
