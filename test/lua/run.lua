-- Runs edge_cases.lua (the edge plugin's handler against a small PDK stub) and prints
-- "N passed, M failed". Usage (from the repository root):  luajit test/lua/run.lua
-- cjson is Debian's lua-cjson, as OpenResty bundles it.
package.path = "test/lua/?.lua;gateway/plugins/animal-store-edge/?.lua;" .. package.path
-- the handler's own modules, under the names Kong gives them
package.preload["kong.plugins.animal-store-edge.metrics"] = function()
  return dofile("gateway/plugins/animal-store-edge/metrics.lua")
end
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
