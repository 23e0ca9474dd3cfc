-- kong.table (kong/pdk/table.lua, 3.9.3)
local new_tab = require "table.new"
local clear_tab = require "table.clear"

local function merge(t1, t2)
  local res = {}
  if t1 then
    for k, v in pairs(t1) do
      res[k] = v
    end
  end
  if t2 then
    for k, v in pairs(t2) do
      res[k] = v
    end
  end
  return res
end

return {
  new = function()
    return { new = new_tab, clear = clear_tab, merge = merge }
  end,
}
