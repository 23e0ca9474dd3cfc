-- The header half of response-transformer, with Kong 3.9's semantics
-- (kong/plugins/response-transformer/header_transformer.lua): remove, rename, replace, add,
-- append, in that order, on the response headers as the upstream sent them; and no
-- Content-Length when the JSON body is going to change.
local mime_type = require "kong.tools.mime_type"


local kong = kong
local type = type
local next = next
local match = string.match
local find = string.find
local sub = string.sub
local parse_mime_type = mime_type.parse_mime_type
local mime_type_includes = mime_type.includes


local _M = {}


local function noop() end


-- "name:value" pairs, as Kong's iterator splits them: the name up to the first colon, the value
-- after the colons that follow it (nil when empty).
local function pair_iter(config_array, i)
  i = i + 1

  local pair = config_array[i]
  if pair == nil then
    return nil
  end

  local name, value = match(pair, "^([^:]+):*(.-)$")
  if value == "" then
    value = nil
  end

  return i, name, value
end


local function iter(config_array)
  if type(config_array) ~= "table" then
    return noop
  end
  return pair_iter, config_array, 0
end
_M.iter = iter


local EXPECTED_MEDIA_TYPE = { type = "application", subtype = "json" }


local function strip(str)
  return match(str, "^%s*(.-)%s*$")
end


--- Whether any of the comma-separated media types is JSON (application/json, application/*+json).
local function is_json_body(content_type)
  if type(content_type) ~= "string" then
    return false
  end

  local start = 1
  local len = #content_type
  while start <= len + 1 do
    local comma = find(content_type, ",", start, true)
    local stop = comma and comma - 1 or len
    local t, subtype = parse_mime_type(strip(sub(content_type, start, stop)))
    if t and subtype and mime_type_includes(EXPECTED_MEDIA_TYPE, { type = t, subtype = subtype }) then
      return true
    end
    if not comma then
      break
    end
    start = comma + 1
  end

  return false
end


local function is_empty(t)
  return type(t) ~= "table" or next(t) == nil
end


local function is_body_transform_set(conf)
  return not is_empty(conf.add.json) or
         not is_empty(conf.rename.json) or
         not is_empty(conf.remove.json) or
         not is_empty(conf.replace.json) or
         not is_empty(conf.append.json)
end


_M.is_json_body = is_json_body
_M.is_body_transform_set = is_body_transform_set


--- Transforms the response headers: `headers` is kong.response.get_headers() as the upstream
--- sent them, so renames and replacements test what came, not what an earlier step did.
function _M.transform_headers(conf, headers)
  local clear_header = kong.response.clear_header
  local set_header   = kong.response.set_header
  local add_header   = kong.response.add_header

  for _, header_name in iter(conf.remove.headers) do
    clear_header(header_name)
  end

  for _, old_name, new_name in iter(conf.rename.headers) do
    local value = headers[old_name]
    if value ~= nil and new_name then
      set_header(new_name, value)
      clear_header(old_name)
    end
  end

  for _, header_name, header_value in iter(conf.replace.headers) do
    if headers[header_name] ~= nil and header_value then
      set_header(header_name, header_value)
    end
  end

  for _, header_name, header_value in iter(conf.add.headers) do
    if headers[header_name] == nil and header_value then
      set_header(header_name, header_value)
    end
  end

  for _, header_name, header_value in iter(conf.append.headers) do
    add_header(header_name, header_value)
  end

  if is_body_transform_set(conf) and is_json_body(headers["Content-Type"]) then
    clear_header("Content-Length")
  end
end


return _M
