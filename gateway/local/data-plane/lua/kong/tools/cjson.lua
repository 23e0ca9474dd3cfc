-- kong.tools.cjson (Kong 3.9.3 kong/tools/cjson.lua) on Debian's lua-cjson 2.1.0, which lacks
-- OpenResty's array extensions: here `array_mt` marks a table to encode as a JSON array (only
-- its items 1..#t, an empty one as []), `empty_array` is such an empty table, and
-- decode_with_array_mt gives decoded arrays that metatable, so that an empty array read from
-- JSON is written back as [] (the C decoder alone turns [] and {} into the same empty table).
local cjson = require("cjson.safe").new()

local type = type
local next = next
local pairs = pairs
local getmetatable = getmetatable
local setmetatable = setmetatable
local re_gsub = ngx.re.gsub
local gsub = string.gsub
local byte = string.byte

cjson.encode_sparse_array(true)

local array_mt = {}
local empty_array_mt = array_mt

-- an empty array stands in the text the C functions see as this string
local EMPTY_ARRAY = "\1kong-empty-array\1"
local EMPTY_ARRAY_JSON = cjson.encode(EMPTY_ARRAY)
local EMPTY_ARRAY_JSON_PATTERN = gsub(EMPTY_ARRAY_JSON, "%p", "%%%0")

local _M = {
  array_mt = array_mt,
  empty_array_mt = empty_array_mt,
  empty_array = setmetatable({}, array_mt),
  null = cjson.null,
}

-- the value as the C encoder must see it: arrays marked with array_mt as plain sequences (an
-- empty one as the marker); other tables copied only where something under them changes
local prepare
prepare = function(v, state)
  if type(v) ~= "table" then
    return v
  end

  if getmetatable(v) == array_mt then
    local n = #v
    if n == 0 then
      state.marker = true
      return EMPTY_ARRAY
    end
    local out = {}
    for i = 1, n do
      out[i] = prepare(v[i], state)
    end
    return out
  end

  local copy
  for k, child in pairs(v) do
    if type(child) == "table" then
      local prepared = prepare(child, state)
      if prepared ~= child then
        if not copy then
          copy = {}
          for ck, cv in pairs(v) do
            copy[ck] = cv
          end
        end
        copy[k] = prepared
      end
    end
  end
  return copy or v
end

function _M.encode(value)
  local state = {}
  local json, err = cjson.encode(prepare(value, state))
  if not json then
    return nil, err
  end
  if state.marker then
    json = gsub(json, EMPTY_ARRAY_JSON_PATTERN, "[]")
  end
  return json
end

_M.decode = cjson.decode

-- strings are matched whole so that a "[]" inside one is left alone
local STRING_OR_EMPTY_ARRAY = [=["(?:[^"\\]|\\.)*"|\[\s*\]]=]

local function mark(m)
  if byte(m[0]) == 91 then -- [
    return EMPTY_ARRAY_JSON
  end
  return m[0]
end

local function restore(v)
  if type(v) ~= "table" then
    if v == EMPTY_ARRAY then
      return setmetatable({}, array_mt)
    end
    return v
  end
  local first = next(v)
  for k, child in pairs(v) do
    v[k] = restore(child)
  end
  if type(first) == "number" then
    setmetatable(v, array_mt)
  end
  return v
end

--- JSON text to Lua, arrays (empty ones included) with array_mt.
function _M.decode_with_array_mt(text)
  if type(text) ~= "string" then
    return cjson.decode(text)
  end
  local marked = text
  if text:find("[", 1, true) then
    marked = re_gsub(text, STRING_OR_EMPTY_ARRAY, mark, "jo")
  end
  local value, err = cjson.decode(marked)
  if value == nil then
    return nil, err
  end
  return restore(value)
end

return _M
