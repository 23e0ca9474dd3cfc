-- The JSON body half of response-transformer, with Kong 3.9's semantics
-- (kong/plugins/response-transformer/body_transformer.lua): remove, rename, replace, add, append
-- on the top-level fields of a JSON body. Kong decodes with OpenResty's
-- decode_array_with_array_mt, so arrays (empty ones too) are written back as arrays:
-- kong.tools.cjson does the same on Debian's lua-cjson.
local cjson = require "kong.tools.cjson"
local header_transformer = require "kong.plugins.response-transformer.header_transformer"


local cjson_encode = cjson.encode
local cjson_decode = cjson.decode_with_array_mt
local iter = header_transformer.iter
local insert = table.insert
local type = type
local sub = string.sub
local gsub = string.gsub
local byte = string.byte
local tonumber = tonumber


local QUOTE = byte('"')


local _M = {}


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


local function parse_json(body)
  if type(body) == "string" then
    return cjson_decode(body)
  end
end


function _M.transform_json_body(conf, buffered_data)
  local json_body = parse_json(buffered_data)
  if json_body == nil then
    return nil, "failed parsing json body"
  end

  if type(json_body) ~= "table" then
    -- a string, number, boolean or null: Kong indexes it, a Lua error in body_filter (run
    -- without pcall) that drops the connection after the headers were sent (for a string, where
    -- a transform writes to it). Here the body goes out as it came (docs/known-differences.md)
    return nil, "the json body is not an object or an array"
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

  return cjson_encode(json_body)
end


return _M
