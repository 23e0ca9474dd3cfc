-- Describe mode: what the control plane needs to know about the node's plugins, read by the
-- Lua runtime that runs them. Loads each plugin listed in <prefix>/kong_conf.json (handler, and
-- schema.lua when it has one) and writes <prefix>/plugins.json:
--   { "lua_version": "LuaJIT 2.1…",
--     "plugins": [{ "name", "priority", "version", "phases": [...], "schema"?: {...}, "error"?: "..." }] }
-- then exits the nginx process (this runs in init_by_lua, before nginx listens).
local cjson = require("cjson.safe").new()

local type = type
local pairs = pairs
local ipairs = ipairs
local tostring = tostring
local format = string.format

cjson.encode_sparse_array(true)

local describe = {}

-- a readable path to a value in a schema: fields lists ({ { name = def }, ... }) show the names
local function child_path(path, key, parent)
  if type(key) == "number" then
    local element = parent[key]
    if type(element) == "table" then
      local only, count = nil, 0
      for k in pairs(element) do
        only, count = k, count + 1
      end
      if count == 1 and type(only) == "string" then
        return path
      end
    end
    return path .. "[" .. key .. "]"
  end
  return path == "" and tostring(key) or (path .. "." .. tostring(key))
end

--- The first function in a schema, as a path (nil when there is none).
local function find_function(value, path, seen)
  if type(value) == "function" then
    return path
  end
  if type(value) ~= "table" or seen[value] then
    return nil
  end
  seen[value] = true
  for key, child in pairs(value) do
    local found = find_function(child, child_path(path, key, value), seen)
    if found then
      return found
    end
  end
  return nil
end

local function describe_plugin(loader, name)
  local entry = { name = name }
  local handler, err = loader.load_handler(name)
  if not handler then
    entry.error = err
    return entry
  end
  entry.priority = handler.PRIORITY
  entry.version = handler.VERSION
  local phases = {}
  for _, phase in ipairs(loader.PHASES) do
    if type(handler[phase]) == "function" then
      phases[#phases + 1] = phase
    end
  end
  entry.phases = phases

  local schema, schema_err = loader.load_schema(name)
  if schema_err then
    entry.error = "schema.lua does not load: " .. schema_err
    return entry
  end
  if schema ~= nil then
    if type(schema) ~= "table" then
      entry.error = "schema.lua does not return a table"
      return entry
    end
    local at = find_function(schema, "", {})
    if at then
      entry.error = format("schema.lua: %s is a Lua function, which the control plane cannot run", at)
      return entry
    end
    entry.schema = schema
  end
  return entry
end

function describe.run()
  local prefix = ngx.config.prefix()
  if prefix:sub(-1) ~= "/" then
    prefix = prefix .. "/"
  end

  local ok, err = pcall(function()
    local config = require("kong.conf").load(prefix)
    _G.kong = require("kong.pdk").new(config, { version = require("kong.meta")._VERSION })
    local loader = require "kong.runloop.plugins_loader"

    local described = {}
    for _, name in ipairs(config.plugins) do
      described[#described + 1] = describe_plugin(loader, name)
    end

    -- kong/api/routes/kong.lua reports lua_version as `jit and jit.version or _VERSION`
    local json, encode_err = cjson.encode({ lua_version = jit and jit.version or _VERSION, plugins = described })
    if not json then
      error("could not encode plugins.json: " .. tostring(encode_err))
    end
    local file, open_err = io.open(prefix .. "plugins.json", "w")
    if not file then
      error("could not write " .. prefix .. "plugins.json: " .. tostring(open_err))
    end
    file:write(json)
    file:close()
  end)

  if not ok then
    io.stderr:write("describe: ", tostring(err), "\n")
    os.exit(1)
  end
  os.exit(0)
end

return describe
