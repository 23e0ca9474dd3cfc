-- A memo of a string function for names the code asks about again and again (header names):
-- bounded, so that names made up per request (from request data) cannot grow it forever.
local MAX_ENTRIES = 1024

return function(compute)
  local size = 0
  return setmetatable({}, { __index = function(self, key)
    local value = compute(key)
    if size >= MAX_ENTRIES then
      for k in pairs(self) do
        self[k] = nil
      end
      size = 0
    end
    rawset(self, key, value)
    size = size + 1
    return value
  end })
end
