-- kong.client (kong/pdk/client.lua). The consumer and credential are read from the host when a
-- plugin asks (most phases never do), and stay the same tables for the request as long as the
-- host's answer does, as ngx.ctx.authenticated_consumer/_credential are.
local bridge = require "pdk.bridge"
local phase = require "pdk.phase"

local read = phase.read
local PACKED = "^([^" .. bridge.FS .. "]*)" .. string.rep(bridge.FS .. "([^" .. bridge.FS .. "]*)", 4) .. "$"

local client = {}

function client.get_ip() return read("ip") end
function client.get_forwarded_ip() return read("ip") end

--- The request's consumer and credential tables (either may be nil), rebuilt only when the
--- authenticated consumer changed since they were built.
local function authenticated()
  local request = phase.request
  local packed = read("consumer")
  if packed ~= request.consumer_packed then
    request.consumer_packed = packed
    request.consumer, request.credential = nil, nil
    if packed then
      local id, username, custom_id, credential_id, credential_consumer_id = packed:match(PACKED)
      if id ~= "" then
        request.consumer = { id = id, username = username ~= "" and username or nil,
                             custom_id = custom_id ~= "" and custom_id or nil }
      end
      if credential_id ~= "" then
        request.credential = { id = credential_id, consumer = { id = credential_consumer_id } }
      end
    end
  end
  return request
end

function client.get_consumer()
  return authenticated().consumer
end

function client.get_credential()
  return authenticated().credential
end

return client
