-- The header half of response-transformer, with Kong 3.9's semantics
-- (kong/plugins/response-transformer/header_transformer.lua): remove, rename, replace, add,
-- append, in that order, on the response headers as the upstream sent them; and no
-- Content-Length when the JSON body is going to change.
local mime_type = require "kong.tools.mime_type"


local kong = kong
local type = type
local next = next
local setmetatable = setmetatable
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


-- "name:value" entries split once per configuration (Kong splits them on every response):
-- { names = { ... }, values = { ... } }, a value nil when empty.
local function split_pairs(config_array)
  local names, values = {}, {}
  local n = 0
  for i, name, value in iter(config_array) do
    names[i], values[i] = name, value
    n = i
  end
  return { n = n, names = names, values = values }
end


local derived_by_conf = setmetatable({}, { __mode = "k" })


local function derive(conf)
  local derived = {
    remove = split_pairs(conf.remove.headers),
    rename = split_pairs(conf.rename.headers),
    replace = split_pairs(conf.replace.headers),
    add = split_pairs(conf.add.headers),
    append = split_pairs(conf.append.headers),
    body_transform = is_body_transform_set(conf),
  }
  derived_by_conf[conf] = derived
  return derived
end


--- Whether the configuration transforms JSON bodies (computed once per configuration).
function _M.transforms_body(conf)
  return (derived_by_conf[conf] or derive(conf)).body_transform
end


--- Transforms the response headers: `headers` is kong.response.get_headers() as the upstream
--- sent them, so renames and replacements test what came, not what an earlier step did.
function _M.transform_headers(conf, headers)
  local derived = derived_by_conf[conf] or derive(conf)
  local clear_header = kong.response.clear_header
  local set_header   = kong.response.set_header
  local add_header   = kong.response.add_header

  local names = derived.remove.names
  for i = 1, derived.remove.n do
    clear_header(names[i])
  end

  local values
  names, values = derived.rename.names, derived.rename.values
  for i = 1, derived.rename.n do
    local old_name, new_name = names[i], values[i]
    local value = headers[old_name]
    if value ~= nil and new_name then
      set_header(new_name, value)
      clear_header(old_name)
    end
  end

  names, values = derived.replace.names, derived.replace.values
  for i = 1, derived.replace.n do
    local value = values[i]
    if headers[names[i]] ~= nil and value then
      set_header(names[i], value)
    end
  end

  names, values = derived.add.names, derived.add.values
  for i = 1, derived.add.n do
    local value = values[i]
    if headers[names[i]] == nil and value then
      set_header(names[i], value)
    end
  end

  names, values = derived.append.names, derived.append.values
  for i = 1, derived.append.n do
    add_header(names[i], values[i])
  end

  if derived.body_transform and is_json_body(headers["Content-Type"]) then
    clear_header("Content-Length")
  end
end


return _M
