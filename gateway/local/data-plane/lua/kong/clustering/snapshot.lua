-- Reading a snapshot: decode, check it against gateway/local/snapshot.schema.json (naming the
-- entity and field that does not match), and turn it into the entities Kong's plugins see: null
-- fields absent (as Kong's DAO returns rows), sets (route protocols and methods, plugin protocols,
-- tags: the arrays the schema marks uniqueItems) answering t[value] as Kong's schema makes them.
--
-- The schema is generated from the control plane's entity definitions; this module reads it once
-- at load and compiles it into checkers, so the contract is written in one place. It knows the
-- subset of JSON Schema the generator writes, and refuses to load on any other keyword.
local cjson = require("cjson.safe").new()

local type = type
local pairs = pairs
local ipairs = ipairs
local tostring = tostring
local error = error
local format = string.format
local concat = table.concat
local floor = math.floor
local re_find = ngx.re.find
local null = cjson.null

local snapshot = {}

-- gateway/local/data-plane/lua/kong/clustering/snapshot.lua -> gateway/local/snapshot.schema.json
local SCHEMA_FILE = debug.getinfo(1, "S").source:match("^@(.*)/data%-plane/lua/kong/clustering/snapshot%.lua$")
if not SCHEMA_FILE then
  error("kong.clustering.snapshot: cannot locate snapshot.schema.json from " .. debug.getinfo(1, "S").source)
end
SCHEMA_FILE = SCHEMA_FILE .. "/snapshot.schema.json"

local function read_schema(path)
  local file, err = io.open(path, "rb")
  if not file then
    error("kong.clustering.snapshot: cannot read " .. tostring(err))
  end
  local text = file:read("*a")
  file:close()
  local schema, decode_err = cjson.decode(text)
  if not schema then
    error("kong.clustering.snapshot: " .. path .. " is not JSON: " .. tostring(decode_err))
  end
  return schema
end

local SCHEMA = read_schema(SCHEMA_FILE)
local DEFS = SCHEMA["$defs"]

-- Compiling a schema: a checker returns nil when the value matches, else what was expected ---------

-- keywords the generator writes that carry no check here (x-foreign: the references, below)
local ANNOTATIONS = { description = true, title = true, ["x-foreign"] = true }
local KNOWN = {
  type = true, enum = true, const = true, pattern = true, minLength = true, minimum = true,
  maximum = true, exclusiveMinimum = true, minItems = true, uniqueItems = true, items = true,
  properties = true, required = true, additionalProperties = true, anyOf = true, ["$ref"] = true,
}

local compile

local function quoted(value)
  return type(value) == "string" and format("%q", value) or tostring(value)
end

local function is_array(v)
  if type(v) ~= "table" then
    return false
  end
  local n = #v
  for k in pairs(v) do
    if type(k) ~= "number" or k < 1 or k > n or floor(k) ~= k then
      return false
    end
  end
  return true
end

local function one_of(values)
  local allowed, names = {}, {}
  for i, value in ipairs(values) do
    allowed[value] = true
    names[i] = quoted(value)
  end
  local expected = "one of " .. concat(names, ", ")
  return function(v)
    if not allowed[v] then
      return expected
    end
  end
end

local function string_checker(s)
  local min_length, pattern = s.minLength or 0, s.pattern
  local expected = pattern and ("a string matching " .. pattern)
                   or (min_length > 0 and "a non-empty string" or "a string")
  return function(v)
    if type(v) ~= "string" or #v < min_length or (pattern and not re_find(v, pattern, "jo")) then
      return expected
    end
  end
end

local function number_checker(s)
  local integer = s.type == "integer"
  local min, max, above = s.minimum, s.maximum, s.exclusiveMinimum
  local expected = integer and "an integer" or "a number"
  if min and max then
    expected = format("%s from %s to %s", expected, min, max)
  elseif min then
    expected = format("%s >= %s", expected, min)
  elseif above then
    expected = format("%s > %s", expected, above)
  end
  return function(v)
    if type(v) ~= "number" or (integer and floor(v) ~= v)
       or (min and v < min) or (max and v > max) or (above and v <= above) then
      return expected
    end
  end
end

local function array_checker(s, where)
  local items = s.items and compile(s.items, where .. ".items")
  local min_items, unique = s.minItems, s.uniqueItems
  return function(v)
    if not is_array(v) then
      return "an array"
    end
    local n = #v
    if min_items and n < min_items then
      return format("an array of at least %d item(s)", min_items)
    end
    local seen = unique and {}
    for i = 1, n do
      local err = items and items(v[i])
      if err then
        return format("an array of %s (item %d is not)", err, i)
      end
      if seen then
        if seen[v[i]] then
          return format("an array without duplicates (item %d repeats)", i)
        end
        seen[v[i]] = true
      end
    end
  end
end

local function object_checker(s, where)
  local properties, required = {}, s.required or {}
  for name, property in pairs(s.properties or {}) do
    properties[name] = compile(property, where .. "." .. name)
  end
  local others = s.additionalProperties
  local values = type(others) == "table" and compile(others, where .. ".additionalProperties")
  return function(v)
    if type(v) ~= "table" or v[1] ~= nil then
      return "an object"
    end
    for _, name in ipairs(required) do
      if v[name] == nil then
        return format("an object with %q", name)
      end
    end
    for name, value in pairs(v) do
      local check = properties[name] or values
      if not check then
        if others == false then
          return format("an object without %q", tostring(name))
        end
      else
        local err = check(value)
        if err then
          return format("an object whose %q is %s", tostring(name), err)
        end
      end
    end
  end
end

local function any_of_checker(s, where)
  local checks, nullable, expected = {}, false, {}
  for i, variant in ipairs(s.anyOf) do
    if variant.type == "null" then
      nullable = true
    else
      local check = compile(variant, where .. ".anyOf")
      checks[#checks + 1] = check
      expected[#expected + 1] = check(nil) or ("variant " .. i)
    end
  end
  local text = concat(expected, " or ") .. (nullable and " or null" or "")
  local only = #checks == 1 and checks[1]
  return function(v)
    if v == null and nullable then
      return nil
    end
    if only then
      -- a nullable field: say what is wrong with the value
      local err = only(v)
      return err and (nullable and err .. " or null" or err)
    end
    for _, check in ipairs(checks) do
      if not check(v) then
        return nil
      end
    end
    return text
  end
end

local compiled_defs = {}

function compile(s, where)
  for keyword in pairs(s) do
    if not KNOWN[keyword] and not ANNOTATIONS[keyword] then
      error(format("kong.clustering.snapshot: %s: keyword %q is not one this data plane checks", where, keyword))
    end
  end
  local ref = s["$ref"]
  if ref then
    local name = ref:match("^#/%$defs/(.+)$")
    if not name or not DEFS[name] then
      error(format("kong.clustering.snapshot: %s: unknown $ref %q", where, ref))
    end
    if not compiled_defs[name] then
      -- a stub first, so that a recursive $ref would resolve
      local compiled
      compiled_defs[name] = function(v) return compiled(v) end
      compiled = compile(DEFS[name], "$defs." .. name)
      compiled_defs[name] = compiled
    end
    return compiled_defs[name]
  end
  if s.anyOf then
    return any_of_checker(s, where)
  end
  if s.const ~= nil then
    local const = s.const
    local expected = quoted(const)
    return function(v)
      if v ~= const then
        return expected
      end
    end
  end
  if s.enum then
    local enum = one_of(s.enum)
    local typed = s.type and compile({ type = s.type }, where)
    return function(v)
      return (typed and typed(v)) and enum(nil) or enum(v)
    end
  end
  local t = s.type
  if t == "string" then
    return string_checker(s)
  elseif t == "integer" or t == "number" then
    return number_checker(s)
  elseif t == "boolean" then
    return function(v)
      if type(v) ~= "boolean" then
        return "a boolean"
      end
    end
  elseif t == "array" then
    return array_checker(s, where)
  elseif t == "object" then
    return object_checker(s, where)
  elseif t == "null" then
    return function(v)
      if v ~= null then
        return "null"
      end
    end
  end
  error(format("kong.clustering.snapshot: %s: a schema this data plane cannot check", where))
end

-- The document's parts, from the schema --------------------------------------------------------

local ROOT = SCHEMA.properties
local SNAPSHOT_VERSION = ROOT.snapshot_version.const

local function non_null(s)
  if s.anyOf then
    for _, variant in ipairs(s.anyOf) do
      if variant.type ~= "null" then
        return variant
      end
    end
  end
  return s
end

-- header fields, then the entity lists in the document's order
local HEADER, TYPES = {}, {}
for _, key in ipairs(SCHEMA.required) do
  local s = ROOT[key]
  local item_ref = s.type == "array" and s.items and s.items["$ref"]
  if item_ref then
    local def_name = item_ref:match("^#/%$defs/(.+)$")
    local def = DEFS[def_name]
    local entity = { list = key, name = def_name, fields = {}, sets = {}, references = {} }
    for _, field in ipairs(def.required) do
      local fs = def.properties[field]
      entity.fields[#entity.fields + 1] = { name = field, check = compile(fs, def_name .. "." .. field) }
      if non_null(fs).uniqueItems then
        entity.sets[#entity.sets + 1] = field
      end
      local target = non_null(fs)["x-foreign"]
      if target then
        entity.references[#entity.references + 1] = { field = field, list = target }
      end
    end
    entity.known = {}
    for field in pairs(def.properties) do
      entity.known[field] = true
    end
    TYPES[#TYPES + 1] = entity
  elseif key ~= "snapshot_version" then
    HEADER[#HEADER + 1] = { name = key, check = compile(s, key) }
  end
end

local SINGULAR = {}
for _, entity in ipairs(TYPES) do
  SINGULAR[entity.list] = entity.name
end

local function describe(entity_type, index, entity)
  local id = type(entity) == "table" and type(entity.id) == "string" and (" " .. entity.id) or ""
  return format("%s%s (%s[%d])", entity_type.name, id, entity_type.list, index)
end

--- nil when `doc` has the shape snapshot.schema.json requires, else why not (entity and field).
function snapshot.check(doc)
  if type(doc) ~= "table" then
    return "snapshot: expected a JSON object"
  end
  if doc.snapshot_version ~= SNAPSHOT_VERSION then
    return format("snapshot: snapshot_version %s is not one this data plane knows (it runs version %d)",
                  tostring(doc.snapshot_version), SNAPSHOT_VERSION)
  end
  for key in pairs(doc) do
    if not ROOT[key] then
      return format("snapshot: unknown property %q", tostring(key))
    end
  end
  for _, field in ipairs(HEADER) do
    local expected = field.check(doc[field.name])
    if expected then
      return format("snapshot: %s must be %s", field.name, expected)
    end
  end

  for _, entity_type in ipairs(TYPES) do
    local key = entity_type.list
    local list = doc[key]
    if list == nil then
      return format("snapshot: %s is missing", key)
    end
    if not is_array(list) then
      return format("snapshot: %s must be an array", key)
    end
    local fields, known = entity_type.fields, entity_type.known
    for i, entity in ipairs(list) do
      if type(entity) ~= "table" then
        return format("snapshot: %s[%d] must be an object", key, i)
      end
      for _, field in ipairs(fields) do
        local value = entity[field.name]
        if value == nil then
          return format("%s: field %q is missing", describe(entity_type, i, entity), field.name)
        end
        local expected = field.check(value)
        if expected then
          return format("%s: field %q must be %s", describe(entity_type, i, entity), field.name, expected)
        end
      end
      for field in pairs(entity) do
        if not known[field] then
          return format("%s: unknown field %q", describe(entity_type, i, entity), tostring(field))
        end
      end
    end
  end

  -- references the data plane follows must lead somewhere
  local ids = {}
  for _, entity_type in ipairs(TYPES) do
    for _, reference in ipairs(entity_type.references) do
      local target = reference.list
      if not ids[target] then
        ids[target] = {}
        for _, entity in ipairs(doc[target]) do
          ids[target][entity.id] = true
        end
      end
      for i, entity in ipairs(doc[entity_type.list]) do
        local ref = entity[reference.field]
        if ref ~= null and not ids[target][ref.id] then
          return format("%s: field %q refers to %s %s, which is not in the snapshot",
                        describe(entity_type, i, entity), reference.field, SINGULAR[target], ref.id)
        end
      end
    end
  end

  return nil
end

-- nulls removed from objects (recursively, plugin configs included), as Kong's DAO returns them
local function strip_nulls(v)
  if type(v) ~= "table" then
    return v
  end
  for k, value in pairs(v) do
    if value == null then
      v[k] = nil
    elseif type(value) == "table" then
      strip_nulls(value)
    end
  end
  return v
end

local function as_set(list)
  if not list then
    return nil
  end
  local members = {}
  for _, value in ipairs(list) do
    members[value] = true
  end
  return setmetatable(list, { __index = members })
end

--- The snapshot as a table of entities, or nil and why it cannot be run.
function snapshot.decode(json)
  if type(json) ~= "string" then
    return nil, "snapshot: not a string"
  end
  local doc, err = cjson.decode(json)
  if doc == nil then
    return nil, "snapshot: invalid JSON: " .. tostring(err)
  end
  err = snapshot.check(doc)
  if err then
    return nil, err
  end

  strip_nulls(doc)
  for _, entity_type in ipairs(TYPES) do
    local sets = entity_type.sets
    if #sets > 0 then
      for _, entity in ipairs(doc[entity_type.list]) do
        for _, field in ipairs(sets) do
          entity[field] = as_set(entity[field])
        end
      end
    end
  end
  return doc
end

snapshot.VERSION = SNAPSHOT_VERSION
snapshot.encode = cjson.encode

return snapshot
