-- Runs edge_cases.lua (the edge plugin's handler against a small PDK stub) and prints
-- "N passed, M failed". Usage (from the repository root):  luajit test/lua/run.lua
-- cjson is Debian's lua-cjson, as OpenResty bundles it; resty.sha256 and resty.string the data
-- plane's own (libcrypto over the FFI).
package.path = "test/lua/?.lua;gateway/plugins/animal-store-edge/?.lua;gateway/local/data-plane/lua/?.lua;" .. package.path
-- the plugin's own modules, as Kong finds them: kong.plugins.animal-store-edge.<module>
table.insert(package.loaders, 2, function(name)
  local module = name:match("^kong%.plugins%.animal%-store%-edge%.([%w_]+)$")
  if module then
    return assert(loadfile("gateway/plugins/animal-store-edge/" .. module .. ".lua"))
  end
end)
local cases = require "edge_cases"
local names = {}
for name in pairs(cases) do names[#names + 1] = name end
table.sort(names)
local passed, failed = 0, 0
for _, name in ipairs(names) do
  local ok, err = pcall(cases[name])
  if ok then
    passed = passed + 1
    print("ok   " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(err))
  end
end
print(string.format("%d passed, %d failed", passed, failed))
if failed > 0 then os.exit(1) end
