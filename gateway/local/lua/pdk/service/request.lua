-- kong.service.request (kong/pdk/service/request.lua): changes the request the service receives,
-- and what kong.request sees for the rest of the phase.
local bridge = require "pdk.bridge"
local headers = require "pdk.headers"
local phase = require "pdk.phase"
local request = require "pdk.request"

local OPS = bridge.OPS
local op, check = phase.op, phase.check
local REWRITE_ACCESS = phase.REWRITE_ACCESS
local REQUEST = headers.REQUEST

local service_request = {}

function service_request.set_header(name, value)
  check(REWRITE_ACCESS, "kong.service.request.set_header")
  headers.set(REQUEST, name, headers.values(name, value))
end

function service_request.add_header(name, value)
  check(REWRITE_ACCESS, "kong.service.request.add_header")
  local values = headers.values(name, value)
  headers.add(REQUEST, name, values, request.get_header(name))
end

function service_request.clear_header(name)
  check(REWRITE_ACCESS, "kong.service.request.clear_header")
  headers.clear(REQUEST, name)
end

function service_request.set_headers(t)
  check(REWRITE_ACCESS, "kong.service.request.set_headers")
  headers.check_all(t)
  for name, value in pairs(t) do
    headers.set(REQUEST, name, headers.normalized_values(value))
  end
end

function service_request.set_path(path)
  check(REWRITE_ACCESS, "kong.service.request.set_path")
  op(OPS.set_service_path, path)
end

function service_request.set_raw_query(query)
  check(REWRITE_ACCESS, "kong.service.request.set_raw_query")
  local cache = phase.cache or {}
  cache.query = query
  phase.cache = cache
  op(OPS.set_service_query, query)
end

function service_request.clear_query_arg(name)
  check(REWRITE_ACCESS, "kong.service.request.clear_query_arg")
  if phase.cache then phase.cache.query = nil end
  op(OPS.clear_service_query_arg, name)
end

return service_request
