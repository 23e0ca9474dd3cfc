-- The JSON body half of response-transformer, with Kong 3.9's semantics
-- (kong/plugins/response-transformer/body_transformer.lua): remove, rename, replace, add, append
-- on the top-level fields of a JSON object body.
--
-- Kong's lua-cjson (OpenResty's) decodes arrays with a metatable so that an empty array encodes
-- back as []; Debian's lua-cjson 2.1.0 has no such option and would turn every [] into {}. So an
-- empty array in the body is read as a one-element array holding a marker string, and written
-- back as [] once encoded.
local cjson = require("cjson.safe").new()
local uuid = require("kong.tools.uuid").uuid
local header_transformer = require "kong.plugins.response-transformer.header_transformer"


local cjson_encode = cjson.encode
local cjson_decode = cjson.decode
local iter = header_transformer.iter
local insert = table.insert
local concat = table.concat
local type = type
local next = next
local pairs = pairs
local getmetatable = getmetatable
local setmetatable = setmetatable
local sub = string.sub
local gsub = string.gsub
local byte = string.byte
local find = string.find
local match = string.match
local tonumber = tonumber


local QUOTE = byte('"')
local BACKSLASH = byte("\\")

-- Per worker, random: no body can hold it by chance.
local EMPTY_ARRAY_MARKER = "\0kong-empty-array-" .. uuid()
local EMPTY_ARRAY_TEXT = cjson_encode({ EMPTY_ARRAY_MARKER })
local EMPTY_ARRAY_PATTERN = gsub(EMPTY_ARRAY_TEXT, "%p", "%%%0")
local EMPTY_ARRAY_MT = {}


local _M = {}


-- The body with every empty array (outside strings) replaced by the marker array; and whether
-- there was one.
local function mark_empty_arrays(body)
  local parts, n, last = nil, 0, 1
  local pos = 1
  while true do
    local s = find(body, '[%["]', pos)
    if not s then
      break
    end

    if byte(body, s) == QUOTE then
      local e = s + 1
      while true do
        local q = find(body, '["\\]', e)
        if not q then
          return body, false -- unterminated string: the decoder says so
        end
        if byte(body, q) == BACKSLASH then
          e = q + 2
        else
          pos = q + 1
          break
        end
      end

    else
      local close = match(body, "^[ \t\r\n]*%]()", s + 1)
      if close then
        parts = parts or {}
        parts[n + 1] = sub(body, last, s - 1)
        parts[n + 2] = EMPTY_ARRAY_TEXT
        n = n + 2
        last = close
        pos = close
      else
        pos = s + 1
      end
    end
  end

  if not parts then
    return body, false
  end
  parts[n + 1] = sub(body, last)
  return concat(parts), true
end


local function is_marker_array(value)
  return type(value) == "table" and value[1] == EMPTY_ARRAY_MARKER and next(value, 1) == nil
end


local function toboolean(value)
  return value == "true"
end


local function cast_value(value, value_type)
  if value_type == "number" then
    return tonumber(value)
  elseif value_type == "boolean" then
    return toboolean(value)
  end
  return value
end


-- A configured value as Kong reads it: JSON-encoded, then unquoted, with \" and \/ undone.
local function json_value(value, json_type)
  local v = cjson_encode(value)
  if v and byte(v, 1) == QUOTE and byte(v, -1) == QUOTE then
    v = gsub(sub(v, 2, -2), [[\"]], [["]])
  end

  v = v and gsub(v, [[\/]], [[/]])

  if json_type then
    v = cast_value(v, json_type)
  end

  return v
end


local function append_value(current_value, value)
  local current_value_type = type(current_value)

  if current_value_type == "string" then
    return { current_value, value }
  end

  if current_value_type == "table" then
    insert(current_value, value)
    return current_value
  end

  return { value }
end


local function encode(value, marked)
  local text, err = cjson_encode(value)
  if not text then
    return nil, err
  end
  if marked then
    text = gsub(text, EMPTY_ARRAY_PATTERN, "[]")
  end
  return text
end


function _M.transform_json_body(conf, buffered_data)
  if type(buffered_data) ~= "string" then
    return nil, "failed parsing json body"
  end

  local marked_body, marked = mark_empty_arrays(buffered_data)
  local json_body = cjson_decode(marked_body)
  if json_body == nil then
    return nil, "failed parsing json body"
  end

  if type(json_body) ~= "table" then
    return nil, "the json body is not an object"
  end

  if match(marked_body, "^%s*(.)") == "[" then
    -- An array: Kong's transforms set and clear string keys, which its encoder ignores on a
    -- table marked as an array. The body goes out as it came, re-encoded.
    return encode(json_body, marked)
  end

  if marked then
    for name, value in pairs(json_body) do
      if is_marker_array(value) then
        json_body[name] = setmetatable({}, EMPTY_ARRAY_MT)
      end
    end
  end

  for _, name in iter(conf.remove.json) do
    json_body[name] = nil
  end

  for _, old_name, new_name in iter(conf.rename.json) do
    if json_body[old_name] ~= nil and new_name then
      local value = json_body[old_name]
      json_body[new_name] = value
      json_body[old_name] = nil
    end
  end

  local replace_json_types = conf.replace.json_types
  for i, name, value in iter(conf.replace.json) do
    local v = json_value(value, replace_json_types and replace_json_types[i])
    if json_body[name] and v ~= nil then
      json_body[name] = v
    end
  end

  local add_json_types = conf.add.json_types
  for i, name, value in iter(conf.add.json) do
    local v = json_value(value, add_json_types and add_json_types[i])
    if not json_body[name] and v ~= nil then
      json_body[name] = v
    end
  end

  local append_json_types = conf.append.json_types
  for i, name, value in iter(conf.append.json) do
    local v = json_value(value, append_json_types and append_json_types[i])
    if v ~= nil then
      json_body[name] = append_value(json_body[name], v)
    end
  end

  local emptied = false
  for name, value in pairs(json_body) do
    if type(value) == "table" and getmetatable(value) == EMPTY_ARRAY_MT and next(value) == nil then
      json_body[name] = { EMPTY_ARRAY_MARKER }
      emptied = true
    end
  end

  return encode(json_body, marked or emptied)
end


-- for the tests of this module
_M.mark_empty_arrays = mark_empty_arrays


return _M
