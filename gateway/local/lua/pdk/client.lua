-- kong.client (kong/pdk/client.lua). The consumer and credential are the same tables for the
-- whole request, as ngx.ctx.authenticated_consumer/_credential are.
local phase = require "pdk.phase"

local read = phase.read

local client = {}

function client.get_ip() return read("ip") end
function client.get_forwarded_ip() return read("ip") end

function client.get_consumer()
  local request = phase.request
  local f = request.consumer_fields
  if not f or f[1] == "" then return nil end
  local consumer = request.consumer
  if not consumer then
    consumer = { id = f[1], username = f[2] ~= "" and f[2] or nil, custom_id = f[3] ~= "" and f[3] or nil }
    request.consumer = consumer
  end
  return consumer
end

function client.get_credential()
  local request = phase.request
  local f = request.consumer_fields
  if not f or f[4] == "" then return nil end
  local credential = request.credential
  if not credential then
    credential = { id = f[4], consumer = { id = f[5] } }
    request.credential = credential
  end
  return credential
end

return client
