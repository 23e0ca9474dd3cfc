-- The state of the phase call being run, shared by the PDK modules, and the ops it produces.
-- Everything a phase changes is collected here and handed back to the host as one string when
-- the phase ends (see bridge.ts). Tables are created on first use: most phases touch few of them.
local bridge = require "pdk.bridge"

local FS = bridge.FS
local concat = table.concat

local phase = {
  now_ms = 0,
  name = nil,             -- "rewrite", "access", ... (bridge.PHASES)
  plugin = nil,           -- the running plugin's name
  status = nil,           -- kong.response.get_status as the phase began
  source = nil,           -- kong.response.get_source as the phase began
  req_blob = nil,         -- request headers as packed (or read), or nil until needed
  resp_blob = nil,
  req_overlay = nil,      -- header name -> value | false (cleared) set during this phase, or nil
  resp_overlay = nil,
  req_added = nil,        -- header name -> { values added with add_header }, or nil
  resp_added = nil,
  status_override = nil,
  body_override = nil,
  request = nil,          -- per-request state: { plugin = { [name] = {} }, shared = {}, consumer tables }
  cache = nil,            -- values read from the host during this phase, or nil
}

-- kong.response.exit stops the handler with this error; the runner tells it from a failure.
phase.EXIT = setmetatable({}, { __tostring = function() return "kong.response.exit" end })

local ops = {}            -- code, a, b, code, a, b, ... (reused; nops says how much is live)
local nops = 0

function phase.op(code, a, b)
  ops[nops + 1] = code
  ops[nops + 2] = a or ""
  ops[nops + 3] = b or ""
  nops = nops + 3
end

--- The ops of the phase as one string, and the buffer emptied for the next phase.
function phase.take_ops()
  local n = nops
  nops = 0
  if n == 0 then return "" end
  -- Not a tail call: LuaJIT cannot compile returning from one into the host's C frame.
  local encoded = concat(ops, FS, 1, n)
  return encoded
end

local js_req = __js_req

--- A value the host holds (bridge.READS), read once per phase.
function phase.read(what)
  local cache = phase.cache
  if not cache then
    cache = {}
    phase.cache = cache
  end
  local v = cache[what]
  if v == nil then
    v = js_req(what)
    if v == nil then v = false end
    cache[what] = v
  end
  return v or nil
end

--- Errors name the line that called the PDK function.
function phase.check(allowed, fn_name)
  if not allowed[phase.name] then
    error(fn_name .. " is not available in the " .. tostring(phase.name) .. " phase", 3)
  end
end

phase.REWRITE_ACCESS = { rewrite = true, access = true }
phase.REWRITE_ACCESS_HEADER = { rewrite = true, access = true, header_filter = true }
phase.HEADER_BODY_LOG = { header_filter = true, body_filter = true, log = true }
phase.BODY = { body_filter = true }

return phase
