-- kong/error_handlers.lua (3.9.3): Kong's body for the errors nginx itself produces
-- (error_page ... /kong_error_handler): the status's message in the template the Accept
-- header (else Content-Type) asks for; nginx's 494 (header too large) goes out as 400.
local tools_http = require "kong.tools.http"
local request_id = require("kong.tools.request_id").get

local find = string.find
local format = string.format

local BODIES = {
  [400] = "Bad request",
  [404] = "Not found",
  [405] = "Method not allowed",
  [408] = "Request timeout",
  [411] = "Length required",
  [412] = "Precondition failed",
  [413] = "Payload too large",
  [414] = "URI too long",
  [417] = "Expectation failed",
  [494] = "Request header or cookie too large",
  [500] = "An unexpected error occurred",
  [502] = "An invalid response was received from the upstream server",
  [503] = "The upstream server is currently unavailable",
  [504] = "The upstream server is timing out",
}

local function body_of(status)
  local body = BODIES[status]
  if not body then
    body = format("The upstream server responded with %d", status)
    BODIES[status] = body
  end
  return body
end

return function(ctx)
  local accept = kong.request.get_header("Accept")
  if accept == nil then
    accept = kong.request.get_header("Content-Type")
    if accept == nil then
      accept = kong.configuration.error_default_type
    end
  end

  local status = kong.response.get_status()
  local message = body_of(status)
  if status == 494 then
    status = 400
  end

  local headers
  if find(accept, "application/grpc", 1, true) == 1 then
    message = { message = message }
  else
    local mime_type = tools_http.get_response_type(accept)
    local rid = request_id(ctx)
    message = format(tools_http.get_error_template(mime_type), message, rid)
    headers = { ["Content-Type"] = mime_type }
  end

  ctx.buffered_proxying = nil
  ctx.response_body = nil
  ctx.delay_response = nil
  ctx.delayed_response = nil
  ctx.delayed_response_callback = nil

  return kong.response.exit(status, message, headers)
end
