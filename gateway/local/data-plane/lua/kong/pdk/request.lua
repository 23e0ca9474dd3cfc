-- kong.request (kong/pdk/request.lua, 3.9.3): the request as the client sent it.
local cjson = require "kong.tools.cjson"
local phase_checker = require "kong.pdk.private.phases"
local normalize = require("kong.tools.uri").normalize
local http_get_header = require("kong.tools.http").get_header

local ngx = ngx
local var = ngx.var
local req = ngx.req
local sub = string.sub
local find = string.find
local lower = string.lower
local type = type
local error = error
local pairs = pairs
local tonumber = tonumber
local setmetatable = setmetatable

local read_body = req.read_body
local start_time = req.start_time
local get_method = req.get_method
local get_headers = req.get_headers
local get_uri_args = req.get_uri_args
local http_version = req.http_version
local get_post_args = req.get_post_args
local get_body_data = req.get_body_data
local get_body_file = req.get_body_file
local decode_args = ngx.decode_args

local check_phase = phase_checker.check
local check_not_phase = phase_checker.check_not
local PHASES = phase_checker.phases

local MIN_HEADERS, MAX_HEADERS = 1, 1000
local MIN_QUERY_ARGS, MAX_QUERY_ARGS = 1, 1000
local MIN_POST_ARGS, MAX_POST_ARGS = 1, 1000
local MIN_PORT, MAX_PORT = 1, 65535

local function check_limit(value, name, min, max)
  if value == nil then
    return
  end
  if type(value) ~= "number" then
    error(name .. " must be a number", 3)
  elseif value < min then
    error(name .. " must be >= " .. min, 3)
  elseif value > max then
    error(name .. " must be <= " .. max, 3)
  end
end

local function host_of(value)
  local at = find(value, "@", 1, true)
  if at then
    value = sub(value, at + 1)
  end
  return value
end

return {
  new = function(self)
    local request = {}

    local is_trusted = self.ip.is_trusted
    local get_ip = self.client.get_ip
    local function trusted()
      return is_trusted(get_ip())
    end

    function request.get_scheme()
      check_phase(PHASES.request)
      return var.scheme
    end

    function request.get_host()
      check_phase(PHASES.request)
      return var.host
    end

    function request.get_port()
      check_not_phase(PHASES.init_worker)
      return tonumber(var.server_port, 10)
    end

    function request.get_forwarded_scheme()
      check_phase(PHASES.request)
      if trusted() then
        local scheme = request.get_header("X-Forwarded-Proto")
        if scheme then
          return lower(scheme)
        end
      end
      return request.get_scheme()
    end

    function request.get_forwarded_host()
      check_phase(PHASES.request)
      if trusted() then
        local host = request.get_header("X-Forwarded-Host")
        if host then
          host = host_of(host)
          local colon = find(host, ":", 1, true)
          return lower(colon and sub(host, 1, colon - 1) or host)
        end
      end
      return request.get_host()
    end

    function request.get_forwarded_port()
      check_phase(PHASES.request)
      if trusted() then
        local port = tonumber(request.get_header("X-Forwarded-Port"), 10)
        if port and port >= MIN_PORT and port <= MAX_PORT then
          return port
        end
        local host = request.get_header("X-Forwarded-Host")
        if host then
          host = host_of(host)
          local colon = find(host, ":", 1, true)
          if colon then
            port = tonumber(sub(host, colon + 1), 10)
            if port and port >= MIN_PORT and port <= MAX_PORT then
              return port
            end
          end
        end
      end
      return ngx.ctx.host_port or request.get_port()
    end

    function request.get_forwarded_path()
      check_phase(PHASES.request)
      if trusted() then
        local path = request.get_header("X-Forwarded-Path")
        if path then
          return path
        end
      end
      return request.get_path()
    end

    function request.get_forwarded_prefix()
      check_phase(PHASES.request)
      if trusted() then
        local prefix = request.get_header("X-Forwarded-Prefix")
        if prefix then
          return prefix
        end
      end
      return var.upstream_x_forwarded_prefix
    end

    function request.get_http_version()
      check_phase(PHASES.request)
      return http_version()
    end

    -- On an error page (KONG_UNEXPECTED) nginx may have rewritten the method: read the request line.
    local function method_from_request_line()
      local line = var.request
      local space = line and find(line, " ", 1, true)
      return space and sub(line, 1, space - 1)
    end

    function request.get_method()
      check_phase(PHASES.request)
      if ngx.ctx.KONG_UNEXPECTED and http_version() < 2 then
        local method = method_from_request_line()
        if method then
          return method
        end
      end
      return get_method()
    end

    function request.get_raw_path()
      check_phase(PHASES.request)
      local uri = var.request_uri or ""
      local q = find(uri, "?", 2, true)
      return q and sub(uri, 1, q - 1) or uri
    end

    function request.get_path()
      return normalize(request.get_raw_path(), true)
    end

    function request.get_path_with_query()
      check_phase(PHASES.request)
      return var.request_uri or ""
    end

    function request.get_raw_query()
      check_phase(PHASES.request)
      return var.args or ""
    end

    function request.get_query(max_args)
      check_phase(PHASES.request)
      check_limit(max_args, "max_args", MIN_QUERY_ARGS, MAX_QUERY_ARGS)

      local ctx = ngx.ctx
      if ctx.KONG_UNEXPECTED and http_version() < 2 then
        local line = var.request or ""
        local q = find(line, "?", 1, true)
        if not q then
          return {}
        end
        local space = find(line, " ", q + 1, true)
        if not space then
          return {}
        end
        return decode_args(sub(line, q + 1, space - 1), max_args)
      end

      local args, err = get_uri_args(max_args, ctx.uri_args)
      if args then
        ctx.uri_args = args
      end
      return args, err
    end

    function request.get_query_arg(name)
      check_phase(PHASES.request)
      if type(name) ~= "string" then
        error("query argument name must be a string", 2)
      end
      local value = request.get_query()[name]
      if type(value) == "table" then
        return value[1]
      end
      return value
    end

    function request.get_header(name)
      check_phase(PHASES.request)
      if type(name) ~= "string" then
        error("header name must be a string", 2)
      end
      return http_get_header(name)
    end

    function request.get_headers(max_headers)
      check_phase(PHASES.request)
      if max_headers == nil then
        return get_headers()
      end
      check_limit(max_headers, "max_headers", MIN_HEADERS, MAX_HEADERS)
      return get_headers(max_headers)
    end

    local before_content = phase_checker.new(PHASES.rewrite, PHASES.access, PHASES.response,
                                             PHASES.error, PHASES.admin_api)

    function request.get_raw_body(max_allowed_file_size)
      check_phase(before_content)

      read_body()
      local body = get_body_data()
      if body then
        return body
      end

      local file_name = get_body_file()
      if not file_name then
        return ""
      end

      if not max_allowed_file_size or max_allowed_file_size < 0 then
        return nil, "request body did not fit into client body buffer, consider raising 'client_body_buffer_size'"
      end

      local file, err = io.open(file_name, "r")
      if not file then
        return nil, "failed to open cached request body '" .. file_name .. "': " .. err
      end
      local size = file:seek("end") or 0
      if max_allowed_file_size > 0 and size > max_allowed_file_size then
        file:close()
        return nil, ("request body file too big: %d > %d"):format(size, max_allowed_file_size)
      end
      file:seek("set")
      local data = file:read("*a")
      file:close()
      return data or ""
    end

    function request.get_body(mimetype, max_args, max_allowed_file_size)
      check_phase(before_content)

      local content_type = mimetype or request.get_header("Content-Type")
      if not content_type then
        return nil, "missing content type"
      end

      local media = lower(content_type)
      local semicolon = find(media, ";", 1, true)
      if semicolon then
        media = sub(media, 1, semicolon - 1)
      end

      if find(media, "application/x-www-form-urlencoded", 1, true) == 1 then
        check_limit(max_args, "max_args", MIN_POST_ARGS, MAX_POST_ARGS)
        read_body()
        -- as Kong calls it: ngx_lua checks an argument given as nil as a number (an error);
        -- without one it parses up to its default, 100 arguments
        local args, err
        if max_args ~= nil then
          args, err = get_post_args(max_args)
        else
          args, err = get_post_args()
        end
        if not args then
          return nil, err, "application/x-www-form-urlencoded"
        end
        return args, nil, "application/x-www-form-urlencoded"

      elseif find(media, "application/json", 1, true) == 1 then
        local body, err = request.get_raw_body(max_allowed_file_size)
        if not body then
          return nil, err, "application/json"
        end
        local json = cjson.decode_with_array_mt(body)
        if type(json) ~= "table" then
          return nil, "invalid json body", "application/json"
        end
        return json, nil, "application/json"

      elseif find(media, "multipart/form-data", 1, true) == 1 then
        -- Kong decodes the parts with lua-multipart (docs/known-differences.md)
        return nil, "multipart/form-data bodies cannot be decoded by the local gateway", "multipart/form-data"
      end

      return nil, "unsupported content type '" .. content_type .. "'", media
    end

    function request.get_start_time()
      check_phase(PHASES.request)
      return ngx.ctx.KONG_PROCESSING_START or (start_time() * 1000)
    end

    local EMPTY = {}

    function request.get_uri_captures(ctx)
      check_phase(PHASES.request)
      ctx = ctx or ngx.ctx
      local captures = ctx.router_matches and ctx.router_matches.uri_captures or EMPTY
      local named, unnamed = {}, {}
      for k, v in pairs(captures) do
        if type(k) == "number" then
          unnamed[k] = v
        else
          named[k] = v
        end
      end
      return { unnamed = setmetatable(unnamed, cjson.array_mt), named = named }
    end

    return request
  end,
}
