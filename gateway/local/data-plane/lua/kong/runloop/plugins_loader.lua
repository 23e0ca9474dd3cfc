-- Loading the node's plugins (kong/db/dao/plugins.lua load_plugin_handler + get_handlers):
-- each `kong.plugins.<name>.handler`, its PRIORITY (an integer) and VERSION (x[.y[.z]]) checked, the
-- scopes its schema.lua forbids (no_consumer...), sorted in execution order.
local log_pdk = require "kong.pdk.log"

local type = type
local pcall = pcall
local tonumber = tonumber
local format = string.format
local match = string.match
local find = string.find
local gmatch = string.gmatch
local concat = table.concat
local floor = math.floor
local null = ngx.null

local PHASES = { "init_worker", "configure", "certificate", "rewrite", "access", "response",
                 "header_filter", "body_filter", "log" }

local loader = {}
loader.PHASES = PHASES

local function valid_priority(p)
  return type(p) == "number" and p == p and p ~= math.huge and p ~= -math.huge and floor(p) == p
end

--- The VERSION Kong keeps (kong/db/dao/plugins.lua:146-156): the `version` rock's relaxed
-- parse, the first run of digits and dots ("0.1-t" is 0.1, "v1.2.3" 1.2.3, "1.0" stays 1.0),
-- each element as a number ("01" is 1); nil for none, an empty element ("1..2") or a fourth.
local function clean_version(v)
  if type(v) ~= "string" then
    return nil
  end
  local run = match(v, "%d[%d.]*")
  if not run or find(run, "..", 1, true) then
    return nil
  end
  local elements, n = {}, 0
  for element in gmatch(run, "%d+") do
    n = n + 1
    if n > 3 then
      return nil
    end
    elements[n] = tonumber(element)
  end
  return concat(elements, ".")
end

--- The handler module of a plugin, or nil and Kong's error.
function loader.load_handler(name)
  local module = "kong.plugins." .. name .. ".handler"
  local ok, handler = pcall(require, module)
  if not ok then
    return nil, name .. " plugin is enabled but not installed;\n" .. tostring(handler)
  end
  if type(handler) ~= "table" then
    return nil, format("Plugin %q cannot be loaded because its handler is not a table", name)
  end
  if not valid_priority(handler.PRIORITY) then
    return nil, format("Plugin %q cannot be loaded because its PRIORITY field is not a valid integer number, got: %q.\n",
                       name, tostring(handler.PRIORITY))
  end
  local version = clean_version(handler.VERSION)
  if not version then
    return nil, format("Plugin %q cannot be loaded because its VERSION field does not follow the \"x.y.z\" format, got: %q.\n",
                       name, tostring(handler.VERSION))
  end
  handler.VERSION = version
  if type(handler.response) == "function" and (type(handler.header_filter) == "function" or type(handler.body_filter) == "function") then
    return nil, format("Plugin %q can't be loaded because it implements both `response` and `header_filter` or `body_filter` methods.\n", name)
  end
  return handler
end

--- The plugin's schema.lua, when it has one (custom plugins do; bundled ones keep theirs on
-- the control plane). Returns schema or nil, and an error when it exists but fails to load.
function loader.load_schema(name)
  local module = "kong.plugins." .. name .. ".schema"
  local ok, schema = pcall(require, module)
  if ok then
    return schema
  end
  if tostring(schema):find("module '" .. module .. "' not found", 1, true) then
    return nil
  end
  return nil, tostring(schema)
end

-- kong/db/dao/plugins.lua sort_by_handler_priority
local function by_priority(a, b)
  local pa, pb = a.handler.PRIORITY or 0, b.handler.PRIORITY or 0
  if pa == pb then
    return a.name > b.name
  end
  return pa > pb
end

--- Loads every listed plugin; errors (the node does not start) on one that cannot be loaded,
-- as Kong does.
function loader.load_all(names)
  local loaded = {}
  for _, name in ipairs(names) do
    local handler, err = loader.load_handler(name)
    if not handler then
      error(err, 0)
    end
    local schema, schema_err = loader.load_schema(name)
    if schema_err then
      error(format("plugin %q: its schema.lua does not load: %s", name, schema_err), 0)
    end
    if type(schema) == "table" and type(schema.fields) == "table" then
      for _, field in ipairs(schema.fields) do
        if type(field) == "table" then
          if type(field.consumer) == "table" and field.consumer.eq == null then
            handler.no_consumer = true
          end
          if type(field.route) == "table" and field.route.eq == null then
            handler.no_route = true
          end
          if type(field.service) == "table" and field.service.eq == null then
            handler.no_service = true
          end
        end
      end
    end

    loaded[#loaded + 1] = {
      name = name,
      handler = handler,
      log = log_pdk.namespaced(name),
    }
  end
  table.sort(loaded, by_priority)
  return loaded
end

return loader
