-- kong.request (kong/pdk/request.lua): the request as the client sent it, with the changes
-- kong.service.request made during this phase. All request headers come over in one crossing:
-- packed into the phase call for the phases that mostly read them, else the first time asked.
local bridge = require "pdk.bridge"
local headers = require "pdk.headers"
local phase = require "pdk.phase"

local read = phase.read
local RS = bridge.RS

local request = {}

function request.blob()
  local blob = phase.req_blob
  if not blob then
    blob = read("headers") or RS
    phase.req_blob = blob
  end
  return blob
end

function request.get_header(name)
  return headers.first(request.blob(), phase.req_overlay, name)
end

function request.get_headers()
  return headers.table(request.blob(), phase.req_overlay, phase.req_added)
end

function request.get_method() return read("method") end
function request.get_path() return read("path") end
function request.get_scheme() return read("scheme") end
function request.get_host() return read("host") end
function request.get_port() return tonumber(read("port")) end
function request.get_raw_query() return read("query") or "" end
function request.get_forwarded_scheme() return read("scheme") end
function request.get_forwarded_host() return read("host") end
function request.get_forwarded_port() return tonumber(read("port")) end

local function unescape(s)
  return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

function request.get_query()
  local t = {}
  for part in (read("query") or ""):gmatch("[^&]+") do
    local k, v = part:match("^([^=]*)=(.*)$")
    if k then v = unescape(v) else k, v = part, true end
    k = unescape(k)
    local existing = t[k]
    if existing == nil then t[k] = v
    elseif type(existing) == "table" then existing[#existing + 1] = v
    else t[k] = { existing, v } end
  end
  return t
end

function request.get_query_arg(name)
  local v = request.get_query()[name]
  if type(v) == "table" then return v[1] end
  return v
end

return request
