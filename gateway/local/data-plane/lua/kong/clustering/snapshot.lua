-- Reading a snapshot (gateway/local/snapshot.schema.json): decode, check it has the shape the
-- schema requires (naming the entity and field that does not), and turn it into the entities
-- Kong's plugins see: null fields absent (as Kong's DAO returns rows), sets (route protocols
-- and methods, plugin protocols) answering t[value] as Kong's schema makes them.
local cjson = require("cjson.safe").new()

local type = type
local pairs = pairs
local ipairs = ipairs
local tostring = tostring
local format = string.format
local match = string.match
local floor = math.floor
local null = cjson.null

local SNAPSHOT_VERSION = 1

local snapshot = {}

local UUID = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$"
local HASH = "^" .. ("[0-9a-f]"):rep(64) .. "$"

-- field checkers: return nil when fine, else what was expected
local function uuid(v)
  if type(v) ~= "string" or not match(v, UUID) or match(v, "%u") then
    return "a lower-case UUID"
  end
end

local function string_or_null(v)
  if v ~= null and type(v) ~= "string" then
    return "a string or null"
  end
end

local function nonempty_string(v)
  if type(v) ~= "string" or v == "" then
    return "a non-empty string"
  end
end

local function boolean(v)
  if type(v) ~= "boolean" then
    return "a boolean"
  end
end

local function integer(min, max)
  return function(v)
    if type(v) ~= "number" or floor(v) ~= v or (min and v < min) or (max and v > max) then
      if min and max then
        return format("an integer from %d to %d", min, max)
      elseif min then
        return format("an integer >= %d", min)
      end
      return "an integer"
    end
  end
end

local function one_of(...)
  local allowed, names = {}, {}
  for _, value in ipairs({ ... }) do
    allowed[value] = true
    names[#names + 1] = type(value) == "string" and format("%q", value) or tostring(value)
  end
  local expected = "one of " .. table.concat(names, ", ")
  return function(v)
    if not allowed[v] then
      return expected
    end
  end
end

local function array_of(element, min_items)
  return function(v)
    if type(v) ~= "table" then
      return "an array"
    end
    local n = #v
    for k in pairs(v) do
      if type(k) ~= "number" or k < 1 or k > n or floor(k) ~= k then
        return "an array"
      end
    end
    if min_items and n < min_items then
      return format("an array of at least %d item(s)", min_items)
    end
    for i = 1, n do
      local err = element(v[i])
      if err then
        return format("an array of %s (item %d is not)", err, i)
      end
    end
  end
end

local function nullable(checker)
  return function(v)
    if v == null then
      return nil
    end
    local err = checker(v)
    if err then
      return err .. " or null"
    end
  end
end

local function any_string(v)
  if type(v) ~= "string" then
    return "a string"
  end
end

local reference = function(v)
  if type(v) ~= "table" or uuid(v.id) then
    return 'an object {"id": <uuid>}'
  end
  for k in pairs(v) do
    if k ~= "id" then
      return 'an object {"id": <uuid>}'
    end
  end
end

local function headers_map(v)
  if v == null then
    return nil
  end
  if type(v) ~= "table" then
    return "an object of header name to array of strings, or null"
  end
  for name, values in pairs(v) do
    if type(name) ~= "string" or array_of(any_string)(values) then
      return "an object of header name to array of strings, or null"
    end
  end
end

local function object(v)
  if type(v) ~= "table" or v[1] ~= nil then
    return "an object"
  end
end

local function number_or_null(v)
  if v ~= null and type(v) ~= "number" then
    return "a number or null"
  end
end

local ENTITIES = {
  services = {
    name = "service",
    fields = {
      id = uuid,
      name = string_or_null,
      protocol = one_of("http", "https"),
      host = nonempty_string,
      port = integer(0, 65535),
      path = string_or_null,
      retries = integer(0, 32767),
      connect_timeout = integer(1),
      write_timeout = integer(1),
      read_timeout = integer(1),
      enabled = boolean,
    },
  },
  routes = {
    name = "route",
    fields = {
      id = uuid,
      name = string_or_null,
      service = nullable(reference),
      protocols = array_of(one_of("http", "https"), 1),
      methods = nullable(array_of(any_string)),
      hosts = nullable(array_of(any_string)),
      paths = nullable(array_of(any_string)),
      headers = headers_map,
      strip_path = boolean,
      preserve_host = boolean,
      regex_priority = integer(),
      path_handling = one_of("v0", "v1"),
      https_redirect_status_code = one_of(301, 302, 307, 308, 426),
      request_buffering = boolean,
      response_buffering = boolean,
      created_at = integer(),
    },
  },
  consumers = {
    name = "consumer",
    fields = {
      id = uuid,
      username = string_or_null,
      custom_id = string_or_null,
    },
  },
  keyauth_credentials = {
    name = "keyauth_credential",
    fields = {
      id = uuid,
      consumer = reference,
      key = nonempty_string,
      tags = nullable(array_of(any_string)),
      expires_at = number_or_null,
    },
  },
  acls = {
    name = "acl",
    fields = {
      id = uuid,
      consumer = reference,
      group = nonempty_string,
      tags = nullable(array_of(any_string)),
    },
  },
  plugins = {
    name = "plugin",
    fields = {
      id = uuid,
      name = nonempty_string,
      instance_name = string_or_null,
      enabled = boolean,
      protocols = array_of(any_string),
      route = nullable(reference),
      service = nullable(reference),
      consumer = nullable(reference),
      config = object,
    },
  },
}

local ENTITY_ORDER = { "services", "routes", "consumers", "keyauth_credentials", "acls", "plugins" }

local function describe(entity_name, index, entity)
  local id = type(entity) == "table" and type(entity.id) == "string" and (" " .. entity.id) or ""
  return format("%s%s (%s[%d])", entity_name, id, entity_name .. "s", index)
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
  if type(doc.config_version) ~= "number" or doc.config_version < 0 or floor(doc.config_version) ~= doc.config_version then
    return "snapshot: config_version must be an integer >= 0"
  end
  if type(doc.config_hash) ~= "string" or not match(doc.config_hash, HASH) then
    return "snapshot: config_hash must be 64 lower-case hexadecimal digits"
  end

  local known = { snapshot_version = true, config_version = true, config_hash = true }
  for _, key in ipairs(ENTITY_ORDER) do
    known[key] = true
  end
  for key in pairs(doc) do
    if not known[key] then
      return format("snapshot: unknown property %q", tostring(key))
    end
  end

  for _, key in ipairs(ENTITY_ORDER) do
    local spec = ENTITIES[key]
    local list = doc[key]
    if list == nil then
      return format("snapshot: %s is missing", key)
    end
    if array_of(function() end)(list) then
      return format("snapshot: %s must be an array", key)
    end
    for i, entity in ipairs(list) do
      if type(entity) ~= "table" then
        return format("snapshot: %s[%d] must be an object", key, i)
      end
      for field, checker in pairs(spec.fields) do
        if entity[field] == nil then
          return format("%s: field %q is missing", describe(spec.name, i, entity), field)
        end
        local expected = checker(entity[field])
        if expected then
          return format("%s: field %q must be %s", describe(spec.name, i, entity), field, expected)
        end
      end
      for field in pairs(entity) do
        if not spec.fields[field] then
          return format("%s: unknown field %q", describe(spec.name, i, entity), tostring(field))
        end
      end
    end
  end

  -- references the data plane follows must lead somewhere
  local ids = {}
  for _, key in ipairs({ "services", "routes", "consumers" }) do
    ids[key] = {}
    for _, entity in ipairs(doc[key]) do
      ids[key][entity.id] = true
    end
  end
  for i, route in ipairs(doc.routes) do
    if route.service ~= null and not ids.services[route.service.id] then
      return format("%s: field \"service\" refers to service %s, which is not in the snapshot",
                    describe("route", i, route), route.service.id)
    end
  end
  for i, credential in ipairs(doc.keyauth_credentials) do
    if not ids.consumers[credential.consumer.id] then
      return format("%s: field \"consumer\" refers to consumer %s, which is not in the snapshot",
                    describe("keyauth_credential", i, credential), credential.consumer.id)
    end
  end
  for i, acl in ipairs(doc.acls) do
    if not ids.consumers[acl.consumer.id] then
      return format("%s: field \"consumer\" refers to consumer %s, which is not in the snapshot",
                    describe("acl", i, acl), acl.consumer.id)
    end
  end
  for i, plugin in ipairs(doc.plugins) do
    for field, entities in pairs({ route = "routes", service = "services", consumer = "consumers" }) do
      local ref = plugin[field]
      if ref ~= null and not ids[entities][ref.id] then
        return format("%s: field %q refers to %s %s, which is not in the snapshot",
                      describe("plugin", i, plugin), field, field, ref.id)
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
  for _, route in ipairs(doc.routes) do
    route.protocols = as_set(route.protocols)
    route.methods = as_set(route.methods)
  end
  for _, plugin in ipairs(doc.plugins) do
    plugin.protocols = as_set(plugin.protocols)
  end
  return doc
end

snapshot.VERSION = SNAPSHOT_VERSION
snapshot.encode = cjson.encode

return snapshot
