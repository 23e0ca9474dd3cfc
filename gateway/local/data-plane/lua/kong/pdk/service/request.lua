-- kong.service.request (kong/pdk/service/request.lua, 3.9.3): the request Kong sends upstream.
local cjson = require "cjson.safe"
local checks = require "kong.pdk.private.checks"
local phase_checker = require "kong.pdk.private.phases"
local escape = require("kong.tools.uri").escape

local ngx = ngx
local var = ngx.var
local type = type
local pairs = pairs
local ipairs = ipairs
local pcall = pcall
local tostring = tostring
local find = string.find
local sub = string.sub
local byte = string.byte
local lower = string.lower
local format = string.format
local insert = table.insert
local sort = table.sort
local concat = table.concat
local normalize_multi_header = checks.normalize_multi_header
local validate_header = checks.validate_header
local validate_headers = checks.validate_headers
local check_phase = phase_checker.check

local PHASES = phase_checker.phases
local access_and_rewrite = phase_checker.new(PHASES.rewrite, PHASES.access)
local access_rewrite_balancer = phase_checker.new(PHASES.rewrite, PHASES.access, PHASES.balancer)

local SLASH = byte("/")

local METHODS = {
  GET = ngx.HTTP_GET, HEAD = ngx.HTTP_HEAD, PUT = ngx.HTTP_PUT, POST = ngx.HTTP_POST,
  DELETE = ngx.HTTP_DELETE, OPTIONS = ngx.HTTP_OPTIONS, MKCOL = ngx.HTTP_MKCOL, COPY = ngx.HTTP_COPY,
  MOVE = ngx.HTTP_MOVE, PROPFIND = ngx.HTTP_PROPFIND, PROPPATCH = ngx.HTTP_PROPPATCH,
  LOCK = ngx.HTTP_LOCK, UNLOCK = ngx.HTTP_UNLOCK, PATCH = ngx.HTTP_PATCH, TRACE = ngx.HTTP_TRACE,
}

--- A query string with the arguments sorted (each `key=value` encoded by ngx.encode_args).
local function ordered_args(args)
  local out = {}
  for k, v in pairs(args) do
    if type(k) ~= "string" then
      return nil, "arg keys must be strings"
    end
    local ok, encoded = pcall(ngx.encode_args, { [k] = v })
    if not ok then
      return nil, encoded
    end
    insert(out, encoded)
  end
  sort(out)
  return concat(out, "&")
end

-- WHATWG URLSearchParams (resty.ada.search, which Kong's clear_query_arg uses): a query is
-- parsed into name/value pairs ("+" is a space, %XX decoded) and serialized again with the
-- application/x-www-form-urlencoded encoding, so the arguments kept come out re-encoded.
local function form_decode(s)
  return ngx.unescape_uri((s:gsub("+", " ")))
end

local function form_encode(s)
  return (s:gsub("[^%w%*%-%._ ]", function(c)
    return format("%%%02X", byte(c))
  end):gsub(" ", "+"))
end

local function reencode_without(args, name)
  local kept = {}
  for pair in (args .. "&"):gmatch("([^&]*)&") do
    if pair ~= "" then
      local eq = find(pair, "=", 1, true)
      local key = form_decode(eq and sub(pair, 1, eq - 1) or pair)
      if key ~= name then
        kept[#kept + 1] = form_encode(key) .. "=" .. form_encode(eq and form_decode(sub(pair, eq + 1)) or "")
      end
    end
  end
  return concat(kept, "&")
end

-- A query that decoding and encoding both leave as it is: bytes of form_encode's [%w%*%-%._],
-- every pair one `key=value` (no empty pair, no second "="), no "&" at the end.
local PLAIN_QUERY = [[^[A-Za-z0-9*._-]*=[A-Za-z0-9*._-]*(?:&[A-Za-z0-9*._-]*=[A-Za-z0-9*._-]*)*\z]]
local re_find = ngx.re.find

-- "<name>=" and "&<name>=", kept for the first names asked (plugins' configured key names; a
-- name from elsewhere should not grow the worker's memory without bound)
local MAX_NAMES = 100
local eq_of, amp_eq_of, names = {}, {}, 0

local function name_needles(name)
  local eq = eq_of[name]
  if eq then
    return eq, amp_eq_of[name]
  end
  eq = name .. "="
  local amp_eq = "&" .. eq
  if names < MAX_NAMES then
    names = names + 1
    eq_of[name], amp_eq_of[name] = eq, amp_eq
  end
  return eq, amp_eq
end

--- `args` without the arguments named `name`, as Kong's resty.ada search_remove re-serializes
--- it. Most queries come out as they went in (PLAIN_QUERY, and no pair named `name`: in such a
--- query a key starts the query or follows "&", and ends at its "="): those are told by one regex
--- and two plain finds, which LuaJIT compiles, where loops over the bytes cut the traces of
--- key-auth's access (hide_credentials) that reach them.
local function remove_arg(args, name)
  local eq, amp_eq = name_needles(name)
  if not re_find(args, PLAIN_QUERY, "jo") or find(args, eq, 1, true) == 1 or find(args, amp_eq, 1, true) then
    local kept = reencode_without(args, name)
    return kept
  end
  return args
end

return {
  new = function()
    local request = {}

    function request.enable_buffering()
      check_phase(access_rewrite_balancer)
      ngx.ctx.buffered_proxying = true
    end

    function request.set_scheme(scheme)
      check_phase(access_rewrite_balancer)
      if type(scheme) ~= "string" then
        error("scheme must be a string", 2)
      end
      if scheme ~= "http" and scheme ~= "https" then
        error("invalid scheme: " .. scheme, 2)
      end
      var.upstream_scheme = scheme
    end

    function request.set_path(path)
      check_phase(access_rewrite_balancer)
      if type(path) ~= "string" then
        error("path must be a string", 2)
      end
      if byte(path) ~= SLASH then
        error("path must start with /", 2)
      end
      var.upstream_uri = escape(path)
    end

    function request.set_raw_query(query)
      check_phase(access_and_rewrite)
      if type(query) ~= "string" then
        error("query must be a string", 2)
      end
      ngx.req.set_uri_args(query)
    end

    function request.set_method(method)
      check_phase(access_and_rewrite)
      if type(method) ~= "string" then
        error("method must be a string", 2)
      end
      local id = METHODS[method]
      if not id then
        error("invalid method: " .. method, 2)
      end
      ngx.req.set_method(id)
    end

    function request.set_query(args)
      check_phase(access_and_rewrite)
      if type(args) ~= "table" then
        error("args must be a table", 2)
      end
      local query, err = ordered_args(args)
      if not query then
        error(err, 2)
      end
      ngx.req.set_uri_args(query)
    end

    function request.clear_query_arg(name)
      check_phase(access_and_rewrite)
      if type(name) ~= "string" then
        error("query argument name must be a string", 2)
      end
      local args = var.args
      if args and args ~= "" then
        local kept = remove_arg(args, name)
        if kept ~= args then
          var.args = kept
        end
      end
    end

    function request.set_header(header, value)
      check_phase(access_rewrite_balancer)
      validate_header(header, value)
      local lower_name = lower(header)
      if lower_name == "host" then
        var.upstream_host = value
      end
      if lower_name == ":authority" then
        return nil, "cannot set :authority pseudo-header on non-grpc requests"
      end
      ngx.req.set_header(header, normalize_multi_header(value))
    end

    function request.add_header(header, value)
      check_phase(access_and_rewrite)
      validate_header(header, value)
      if lower(header) == "host" then
        var.upstream_host = value
      end
      local values = ngx.req.get_headers()[header]
      if type(values) ~= "table" then
        values = { values }
      end
      insert(values, normalize_multi_header(value))
      ngx.req.set_header(header, values)
    end

    function request.clear_header(header)
      check_phase(access_and_rewrite)
      if type(header) ~= "string" then
        error("header must be a string", 2)
      end
      ngx.req.clear_header(header)
    end

    function request.set_headers(headers)
      check_phase(access_and_rewrite)
      if type(headers) ~= "table" then
        error("headers must be a table", 2)
      end
      validate_headers(headers)
      for k, v in pairs(headers) do
        if lower(k) == "host" then
          var.upstream_host = v
        end
        ngx.req.set_header(k, normalize_multi_header(v))
      end
    end

    function request.set_raw_body(body)
      check_phase(access_rewrite_balancer)
      if type(body) ~= "string" then
        error("body must be a string", 2)
      end
      if ngx.get_phase() ~= "balancer" then
        ngx.req.read_body()
      end
      ngx.req.set_body_data(body)
    end

    local BODY_ENCODERS = {
      ["application/x-www-form-urlencoded"] = function(args, mime)
        local query, err = ordered_args(args)
        if not query then
          error(err, 3)
        end
        return query, mime
      end,
      ["application/json"] = function(args, mime)
        local encoded, err = cjson.encode(args)
        if not encoded then
          error(err, 3)
        end
        return encoded, mime
      end,
      ["multipart/form-data"] = function(args, mime)
        local boundary = mime:match('boundary="([^"]*)"') or mime:match("boundary=([^;%s]+)")
        local keys = {}
        for k, v in pairs(args) do
          if type(k) ~= "string" then
            error(("invalid key %q: got %s, expected string"):format(tostring(k), type(k)), 3)
          end
          local tv = type(v)
          if tv ~= "string" and tv ~= "number" and tv ~= "boolean" then
            error(("invalid value %q: got %s, expected string, number or boolean"):format(k, tv), 3)
          end
          keys[#keys + 1] = k
        end
        local function clashes(b)
          for _, k in ipairs(keys) do
            if find(tostring(args[k]), "\n--" .. b, 1, true) then
              return true
            end
          end
          return false
        end
        while not boundary or clashes(boundary) do
          boundary = tostring(math.random(1e10))
        end
        sort(keys)
        local out = {}
        for _, k in ipairs(keys) do
          out[#out + 1] = "--" .. boundary .. "\r\nContent-Disposition: form-data; name=\"" .. k .. "\"\r\n\r\n"
                          .. tostring(args[k]) .. "\r\n"
        end
        out[#out + 1] = "--" .. boundary .. "--\r\n"
        return concat(out), "multipart/form-data; boundary=" .. boundary
      end,
    }

    function request.set_body(args, mime)
      check_phase(access_and_rewrite)
      if type(args) ~= "table" then
        error("args must be a table", 2)
      end
      if mime and type(mime) ~= "string" then
        error("mime must be a string", 2)
      end
      if not mime then
        mime = ngx.req.get_headers()["Content-Type"]
        if not mime then
          return nil, "content type was neither explicitly given as an argument or received as a header"
        end
      end

      local semicolon = find(mime, ";", 1, true)
      local encode = BODY_ENCODERS[semicolon and sub(mime, 1, semicolon - 1) or mime]
      if not encode then
        error("unsupported content type " .. mime, 2)
      end

      ngx.req.read_body()
      local body, content_type = encode(args, mime)
      ngx.req.set_body_data(body)
      ngx.req.set_header("Content-Type", content_type)
      return true
    end

    return request
  end,
}
