-- The phase runner: the functions the host calls (lua-plugin-host.ts), and the globals plugins
-- see. One phase call runs one phase of one plugin instance for one request; what it changed
-- comes back as the ops string (bridge.ts).
local bridge = require "pdk.bridge"
local ctx = require "pdk.ctx"
local json = require "cjson"
local phase = require "pdk.phase"

kong = require "pdk.kong"
ngx = require "pdk.ngx"

local OPS, PHASES, SOURCES, PHASE_HEADERS = bridge.OPS, bridge.PHASES, bridge.SOURCES, bridge.PHASE_HEADERS
local FRAMING = "[" .. bridge.FS .. bridge.RS .. "]"
local EXIT = phase.EXIT
local gsub, tostring, pcall = string.gsub, tostring, pcall
-- Lua 5.4 receives the host's numbers as floats (200.0); LuaJIT has one number type.
local tointeger = math.tointeger or function(n) return n end

local plugins = {}        -- name -> handler table
local configs = {}        -- config handle -> { name, handler, conf } of one plugin instance
local requests = {}       -- request slot -> per-request state

--- Requires a plugin the host preloaded (kong.plugins.<name>.handler/schema); answers JSON:
--- { schema, priority, version, phases = "rewrite,access,..." }.
function __kong_register(name)
  local schema = require("kong.plugins." .. name .. ".schema")
  local handler = require("kong.plugins." .. name .. ".handler")
  plugins[name] = handler
  local phases = {}
  for _, p in ipairs({ "init_worker", "rewrite", "access", "header_filter", "body_filter", "log" }) do
    if type(handler[p]) == "function" then phases[#phases + 1] = p end
  end
  return json.encode({ schema = schema, priority = handler.PRIORITY, version = handler.VERSION or "",
                       phases = table.concat(phases, ",") })
end

function __kong_init_worker(name)
  local handler = plugins[name]
  handler:init_worker()
end

--- Hands a plugin instance's config to the VM (JSON), or forgets it (no name).
function __kong_set_config(handle, name, config_json)
  if name then
    configs[handle] = { name = name, handler = plugins[name], conf = json.decode(config_json) }
  else
    configs[handle] = nil
  end
end

--- Runs one phase (see bridge.ts for the arguments). `done` is true when no later phase call will
--- come for the request; `headers` is the blob PHASE_HEADERS names for the phase, or nil.
function __kong_phase(slot, config_handle, phase_code, now, status, source_code, done, headers)
  local instance = configs[config_handle]
  local name = instance.name
  local phase_name = PHASES[phase_code]
  phase.now_ms = now
  phase.name = phase_name
  phase.plugin = name
  phase.cache = nil
  phase.status, phase.source = tointeger(status), SOURCES[source_code]
  phase.req_blob, phase.resp_blob = nil, nil
  local side = PHASE_HEADERS[phase_name]
  if side == "request" then phase.req_blob = headers elseif side == "response" then phase.resp_blob = headers end
  phase.req_overlay, phase.resp_overlay, phase.req_added, phase.resp_added = nil, nil, nil, nil
  phase.status_override, phase.body_override = nil, nil
  local request = requests[slot]
  if not request then
    request = { plugin = {}, shared = {} }
    requests[slot] = request
  end
  phase.request = request
  ctx.enter(request, name)

  local handler = instance.handler
  local ok, err = pcall(handler[phase_name], handler, instance.conf)
  if not ok and err ~= EXIT then
    phase.op(OPS.fail, (gsub(tostring(err), FRAMING, " ")))
  end
  if phase.body_override then
    __js_set_body(phase.body_override)
    phase.op(OPS.replace_body)
  end
  if done then requests[slot] = nil end
  return phase.take_ops()
end

--- What Kong's Admin API reports as lua_version (kong/api/routes/kong.lua).
function __kong_lua_version()
  return jit and jit.version or _VERSION
end

function __kong_release(slot)
  requests[slot] = nil
end
