-- kong.response (kong/pdk/response.lua, 3.9.3): the response the client receives, and Kong's
-- exits (kong.response.exit / error), delayed during the access phase as Kong delays them.
local cjson = require "kong.tools.cjson"
local checks = require "kong.pdk.private.checks"
local phase_checker = require "kong.pdk.private.phases"
local constants = require "kong.constants"
local tools_http = require "kong.tools.http"
local request_id = require("kong.tools.request_id").get
local add_resp_header = require("ngx.resp").add_header
local get_method = ngx.req.get_method
local clear_req_header = ngx.req.clear_header

local ngx = ngx
local arg = ngx.arg
local format = string.format
local type = type
local find = string.find
local lower = string.lower
local error = error
local pairs = pairs
local yield = coroutine.yield
local cjson_encode = cjson.encode
local normalize_multi_header = checks.normalize_multi_header
local validate_header = checks.validate_header
local validate_headers = checks.validate_headers
local check_phase = phase_checker.check

local PHASES = phase_checker.phases
local SOURCE = constants.RESPONSE_SOURCE.TYPES

local header_body_log = phase_checker.new(PHASES.response, PHASES.header_filter, PHASES.body_filter,
                                          PHASES.log, PHASES.error, PHASES.admin_api)
local rewrite_access_header = phase_checker.new(PHASES.rewrite, PHASES.access, PHASES.response,
                                                PHASES.balancer, PHASES.header_filter, PHASES.error,
                                                PHASES.admin_api)

local MIN_HEADERS, MAX_HEADERS = 1, 1000
local MIN_STATUS_CODE, MAX_STATUS_CODE, MIN_ERR_STATUS_CODE = 100, 599, 400
local CONTENT_TYPE_JSON = "application/json; charset=utf-8"
local CONTENT_TYPE_GRPC = "application/grpc"

local HTTP_TO_GRPC_STATUS = {
  [200] = 0, [400] = 3, [401] = 16, [403] = 7, [404] = 5, [409] = 6, [429] = 8, [499] = 1,
  [500] = 13, [501] = 12, [503] = 14, [504] = 4,
}

local GRPC_MESSAGES = {
  [0] = "OK", [1] = "Canceled", [2] = "Unknown", [3] = "InvalidArgument", [4] = "DeadlineExceeded",
  [5] = "NotFound", [6] = "AlreadyExists", [7] = "PermissionDenied", [8] = "ResourceExhausted",
  [9] = "FailedPrecondition", [10] = "Aborted", [11] = "OutOfRange", [12] = "Unimplemented",
  [13] = "Internal", [14] = "Unavailable", [15] = "DataLoss", [16] = "Unauthenticated",
}

local HTTP_ERROR_MESSAGES = {
  [400] = "Bad request",
  [401] = "Unauthorized",
  [402] = "Payment required",
  [403] = "Forbidden",
  [404] = "Not found",
  [405] = "Method not allowed",
  [406] = "Not acceptable",
  [407] = "Proxy authentication required",
  [408] = "Request timeout",
  [409] = "Conflict",
  [410] = "Gone",
  [411] = "Length required",
  [412] = "Precondition failed",
  [413] = "Payload too large",
  [414] = "URI too long",
  [415] = "Unsupported media type",
  [416] = "Range not satisfiable",
  [417] = "Expectation failed",
  [418] = "I'm a teapot",
  [421] = "Misdirected request",
  [422] = "Unprocessable entity",
  [423] = "Locked",
  [424] = "Failed dependency",
  [425] = "Too early",
  [426] = "Upgrade required",
  [428] = "Precondition required",
  [429] = "Too many requests",
  [431] = "Request header fields too large",
  [451] = "Unavailable for legal reasons",
  [494] = "Request header or cookie too large",
  [500] = "An unexpected error occurred",
  [501] = "Not implemented",
  [502] = "An invalid response was received from the upstream server",
  [503] = "The upstream server is currently unavailable",
  [504] = "The upstream server is timing out",
  [505] = "HTTP version not supported",
  [506] = "Variant also negotiates",
  [507] = "Insufficient storage",
  [508] = "Loop detected",
  [510] = "Not extended",
  [511] = "Network authentication required",
}

local function http_error_message(status)
  local message = HTTP_ERROR_MESSAGES[status]
  if not message then
    message = format("The upstream server responded with %d", status)
    HTTP_ERROR_MESSAGES[status] = message
  end
  return message
end

local function is_transfer_encoding(lower_name)
  return lower_name == "transfer-encoding" or lower_name == "transfer_encoding"
end

local function is_grpc_request()
  local content_type = ngx.var.content_type
  return content_type and find(content_type, CONTENT_TYPE_GRPC, 1, true) == 1 and ngx.req.http_version() == 2
end

return {
  new = function(self)
    local response = {}

    function response.get_status()
      check_phase(header_body_log)
      return ngx.status
    end

    function response.get_headers(max_headers)
      check_phase(header_body_log)
      if max_headers == nil then
        return ngx.resp.get_headers()
      end
      if type(max_headers) ~= "number" then
        error("max_headers must be a number", 2)
      elseif max_headers < MIN_HEADERS then
        error("max_headers must be >= " .. MIN_HEADERS, 2)
      elseif max_headers > MAX_HEADERS then
        error("max_headers must be <= " .. MAX_HEADERS, 2)
      end
      return ngx.resp.get_headers(max_headers)
    end

    -- Kong reads ngx.resp.get_headers()[name]: a table of every response header, for one. The
    -- same value comes from ngx.header[name] (one lookup; both read the name's "_" as "-"),
    -- except for the two headers ngx.resp.get_headers() makes up from nginx's state, and past
    -- its 100 headers (README: where it differs).
    local FROM_STATE = { connection = true, ["transfer-encoding"] = true, ["transfer_encoding"] = true }

    function response.get_header(name)
      check_phase(header_body_log)
      if type(name) ~= "string" then
        error("header name must be a string", 2)
      end
      local value
      local n = #name
      if (n == 10 or n == 17) and FROM_STATE[lower(name)] then
        value = ngx.resp.get_headers()[name]
      else
        value = ngx.header[name]
      end
      if type(value) == "table" then
        return value[1]
      end
      return value
    end

    --- "exit" (a plugin or Kong answered), "service" (the upstream did) or "error".
    function response.get_source(ctx)
      if ctx == nil then
        check_phase(header_body_log)
        ctx = ngx.ctx
      end
      if ctx.KONG_UNEXPECTED then
        return SOURCE.ERROR
      end
      if ctx.KONG_EXITED then
        return SOURCE.EXIT
      end
      if ctx.KONG_PROXIED then
        return SOURCE.SERVICE
      end
      return SOURCE.ERROR
    end

    function response.set_status(status)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      if type(status) ~= "number" then
        error("code must be a number", 2)
      elseif status < MIN_STATUS_CODE or status > MAX_STATUS_CODE then
        error(format("code must be a number between %u and %u", MIN_STATUS_CODE, MAX_STATUS_CODE), 2)
      end
      ngx.status = status
    end

    function response.set_header(name, value)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      validate_header(name, value)
      if is_transfer_encoding(lower(name)) then
        self.log.warn("manually setting Transfer-Encoding. Ignored.")
        return
      end
      ngx.header[name] = normalize_multi_header(value)
    end

    function response.add_header(name, value)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      validate_header(name, value)
      add_resp_header(name, normalize_multi_header(value))
    end

    function response.clear_header(name)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      if type(name) ~= "string" then
        error("header name must be a string", 2)
      end
      ngx.header[name] = nil
    end

    function response.set_headers(headers)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      validate_headers(headers)
      for name, value in pairs(headers) do
        if is_transfer_encoding(lower(name)) then
          self.log.warn("manually setting Transfer-Encoding. Ignored.")
        else
          ngx.header[name] = normalize_multi_header(value)
        end
      end
    end

    --- In body_filter: the whole body once its last chunk arrives (the chunks before are held
    -- back and nil returned), as Kong 3.9 buffers it in ngx.ctx.KONG_BODY_BUFFER.
    function response.get_raw_body()
      check_phase(PHASES.body_filter)

      local ctx = ngx.ctx
      local buffered = ctx.KONG_BODY_BUFFER
      local chunk, eof = arg[1], arg[2]

      if eof and not buffered then
        return chunk
      end

      if type(chunk) == "string" and chunk ~= "" then
        if not buffered then
          buffered = {}
          ctx.KONG_BODY_BUFFER = buffered
        end
        buffered[#buffered + 1] = chunk
      end

      if eof then
        local body = buffered and table.concat(buffered) or ""
        arg[1] = body
        ctx.KONG_BODY_BUFFER = nil
        return body
      end

      arg[1] = nil
      return nil
    end

    function response.set_raw_body(body)
      check_phase(PHASES.body_filter)
      if type(body) ~= "string" then
        error("body must be a string", 2)
      end
      arg[1] = body == "" and "\n" or body
      arg[2] = true
      ngx.ctx.KONG_BODY_BUFFER = nil
    end

    local function send(status, body, headers)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end

      ngx.status = status

      local has_content_type, has_content_length
      if headers ~= nil then
        for name, value in pairs(headers) do
          local lower_name = lower(name)
          if is_transfer_encoding(lower_name) then
            self.log.warn("manually setting Transfer-Encoding. Ignored.")
          else
            ngx.header[name] = normalize_multi_header(value)
          end
          if lower_name == "content-type" or lower_name == "content_type" then
            has_content_type = true
          elseif lower_name == "content-length" or lower_name == "content_length" then
            has_content_length = true
          end
        end
      end

      local response_type = ngx.header["Content-Type"]
      local is_grpc, is_grpc_output
      if response_type then
        is_grpc = find(response_type, CONTENT_TYPE_GRPC, 1, true) == 1
        is_grpc_output = is_grpc
      else
        is_grpc = is_grpc_request()
      end

      local grpc_status
      if is_grpc and not ngx.header["grpc-status"] then
        grpc_status = HTTP_TO_GRPC_STATUS[status]
        if not grpc_status then
          if status >= 500 then
            grpc_status = 13
          elseif status >= 400 then
            grpc_status = 3
          elseif status >= 200 and status <= 299 then
            grpc_status = 0
          else
            grpc_status = 2
          end
        end
        ngx.header["grpc-status"] = grpc_status
      end

      local json
      if type(body) == "table" then
        if is_grpc then
          if is_grpc_output then
            error("table body encoding with gRPC is not supported", 2)
          elseif type(body.message) == "string" then
            body = body.message
          else
            self.log.warn("body was removed because table body encoding with gRPC is not supported")
            body = nil
          end
        else
          local err
          json, err = cjson_encode(body)
          if err then
            error(format("body encoding failed while flushing response: %s", err), 2)
          end
        end
      end

      local ctx = ngx.ctx
      local phase = ctx.KONG_PHASE
      local in_header_filter = phase == PHASES.header_filter

      -- After the last buffer of a response made in rewrite or access, ngx_lua discards the
      -- request body nobody read, and nginx answers a pending "Expect: 100-continue" first: the
      -- client would be told to send the body this answer refuses. nginx's own error responses
      -- skip that step (ngx_http_special_response_handler); so does this one, the Expect header
      -- set aside until the body filter's last call (Kong.body_filter puts it back for the
      -- phases after). A HEAD response discards nothing.
      if (phase == PHASES.access or phase == PHASES.rewrite) and get_method() ~= "HEAD" then
        local expect = ngx.var.http_expect
        if expect then
          clear_req_header("Expect")
          ctx.expect_set_aside = expect
        end
      end

      if json ~= nil then
        if not has_content_type then
          ngx.header["Content-Type"] = CONTENT_TYPE_JSON
        end
        if not has_content_length then
          ngx.header["Content-Length"] = #json
        end
        if in_header_filter then
          ctx.response_body = json
        else
          ngx.print(json)
        end

      elseif body ~= nil then
        if is_grpc and not is_grpc_output then
          ngx.header["Content-Length"] = 0
          ngx.header["grpc-message"] = body
          if in_header_filter then
            ctx.response_body = ""
          else
            ngx.print()
          end
        else
          if not has_content_length then
            ngx.header["Content-Length"] = #body
          end
          if grpc_status and not ngx.header["grpc-message"] then
            ngx.header["grpc-message"] = GRPC_MESSAGES[grpc_status]
          end
          if in_header_filter then
            ctx.response_body = body
          else
            ngx.print(body)
          end
        end

      else
        if not has_content_length then
          ngx.header["Content-Length"] = 0
        end
        if grpc_status and not ngx.header["grpc-message"] then
          ngx.header["grpc-message"] = GRPC_MESSAGES[grpc_status]
        end
        if is_grpc then
          if in_header_filter then
            ctx.response_body = ""
          else
            ngx.print()
          end
        end
      end

      if in_header_filter then
        return ngx.exit(ngx.OK)
      end
      return ngx.exit(status)
    end

    local function flush(ctx)
      local delayed = (ctx or ngx.ctx).delayed_response
      return send(delayed.status_code, delayed.content, delayed.headers)
    end

    local function exit_or_delay(ctx, status, body, headers)
      ctx.KONG_EXITED = true
      if ctx.delay_response and not ctx.delayed_response then
        ctx.delayed_response = { status_code = status, content = body, headers = headers }
        ctx.delayed_response_callback = flush
        yield()
        return
      end
      return send(status, body, headers)
    end

    function response.exit(status, body, headers)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      if type(status) ~= "number" then
        error("code must be a number", 2)
      elseif status < MIN_STATUS_CODE or status > MAX_STATUS_CODE then
        error(format("code must be a number between %u and %u", MIN_STATUS_CODE, MAX_STATUS_CODE), 2)
      end
      if body ~= nil and type(body) ~= "string" and type(body) ~= "table" then
        error("body must be a nil, string or table", 2)
      end
      if headers ~= nil and type(headers) ~= "table" then
        error("headers must be a nil or table", 2)
      end
      if headers ~= nil then
        validate_headers(headers)
      end
      return exit_or_delay(ngx.ctx, status, body, headers)
    end

    function response.error(status, message, headers)
      check_phase(rewrite_access_header)
      if ngx.headers_sent then
        error("headers have already been sent", 2)
      end
      if type(status) ~= "number" then
        error("code must be a number", 2)
      elseif status < MIN_ERR_STATUS_CODE or status > MAX_STATUS_CODE then
        error(format("code must be a number between %u and %u", MIN_ERR_STATUS_CODE, MAX_STATUS_CODE), 2)
      end
      if message ~= nil then
        if type(message) == "table" then
          local err
          message, err = cjson_encode(message)
          if err then
            error("could not JSON encode the error message: " .. err, 2)
          end
        end
        if type(message) ~= "string" then
          error("message must be a nil, a string or a table", 2)
        end
      end
      if headers ~= nil and type(headers) ~= "table" then
        error("headers must be a nil or table", 2)
      end
      if headers ~= nil then
        validate_headers(headers)
      else
        headers = {}
      end

      local given = headers["Content-Type"]
      local content_type = type(given) == "table" and given[1] or given
      if given == nil then
        if is_grpc_request() then
          content_type = CONTENT_TYPE_GRPC
        else
          content_type = tools_http.get_response_type(ngx.req.get_headers()["Accept"])
        end
      end
      headers["Content-Type"] = content_type

      local body
      if content_type ~= CONTENT_TYPE_GRPC then
        local rid = request_id(ngx.ctx)
        local template = tools_http.get_error_template(content_type)
        if template then
          body = format(template, message or http_error_message(status), rid)
        end
      end

      return exit_or_delay(ngx.ctx, status, body, headers)
    end

    response.get_http_error_message = http_error_message

    return response
  end,
}
