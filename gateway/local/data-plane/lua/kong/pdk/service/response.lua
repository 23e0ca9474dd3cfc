-- kong.service.response (kong/pdk/service/response.lua, 3.9.3): the response as the upstream
-- sent it (before plugins changed it).
local phase_checker = require "kong.pdk.private.phases"
local cjson = require "kong.tools.cjson"

local ngx = ngx
local sub = string.sub
local gsub = string.gsub
local lower = string.lower
local type = type
local error = error
local tonumber = tonumber
local pairs = pairs
local getmetatable = getmetatable
local setmetatable = setmetatable
local check_phase = phase_checker.check

local PHASES = phase_checker.phases
local header_body_log = phase_checker.new(PHASES.response, PHASES.header_filter, PHASES.body_filter, PHASES.log)

local MIN_HEADERS, MAX_HEADERS = 1, 1000

local upstream_var = require("kong.tools.memo")(function(name)
  return "upstream_http_" .. gsub(lower(name), "-", "_")
end)

-- ngx.resp.get_headers() lists what the client gets; a header the upstream did not send
-- (added by Kong or a plugin) reads as nil.
local original_index
local UPSTREAM_ONLY_MT = {
  __index = function(t, name)
    if type(name) == "string" and not ngx.var[upstream_var[name]] then
      return nil
    end
    return original_index(t, name)
  end,
}

-- buffered proxying: the subrequest's headers, looked up as ngx.resp.get_headers() would
local function buffered_view(headers, max_headers)
  return setmetatable({}, { __index = function(_, name)
    if type(name) ~= "string" then
      return nil
    end
    local value = headers[name]
    if value ~= nil then
      return value
    end
    local wanted = gsub(lower(name), "_", "-")
    local i = 0
    for n, v in pairs(headers) do
      i = i + 1
      if i > max_headers then
        return nil
      end
      if gsub(lower(n), "_", "-") == wanted then
        return v
      end
    end
  end })
end

local function upstream_only(headers, err)
  if not original_index then
    original_index = getmetatable(headers).__index
  end
  return setmetatable(headers, UPSTREAM_ONLY_MT), err
end

return {
  new = function()
    local response = {}

    function response.get_status()
      check_phase(header_body_log)
      local ctx = ngx.ctx
      if ctx.buffered_status then
        return ctx.buffered_status
      end
      return tonumber(sub(ngx.var.upstream_status or "", -3))
    end

    function response.get_headers(max_headers)
      check_phase(header_body_log)
      local buffered = ngx.ctx.buffered_headers
      if max_headers == nil then
        if buffered then
          return buffered_view(buffered, 100)
        end
        return upstream_only(ngx.resp.get_headers())
      end
      if type(max_headers) ~= "number" then
        error("max_headers must be a number", 2)
      elseif max_headers < MIN_HEADERS then
        error("max_headers must be >= " .. MIN_HEADERS, 2)
      elseif max_headers > MAX_HEADERS then
        error("max_headers must be <= " .. MAX_HEADERS, 2)
      end
      if buffered then
        return buffered_view(buffered, max_headers)
      end
      return upstream_only(ngx.resp.get_headers(max_headers))
    end

    function response.get_header(name)
      check_phase(header_body_log)
      if type(name) ~= "string" then
        error("header name must be a string", 2)
      end
      local value = response.get_headers()[name]
      if type(value) == "table" then
        return value[1]
      end
      return value
    end

    local function require_buffering()
      if not ngx.ctx.buffered_proxying then
        error("service body is only available with buffered proxying " ..
              "(see: kong.service.request.enable_buffering function)", 3)
      end
    end

    function response.get_raw_body()
      check_phase(header_body_log)
      require_buffering()
      return ngx.ctx.buffered_body or ""
    end

    function response.get_body(mimetype, max_args)
      check_phase(header_body_log)
      require_buffering()
      local content_type = mimetype or response.get_header("Content-Type")
      if not content_type then
        return nil, "missing content type"
      end
      local media = lower(content_type)
      local semicolon = media:find(";", 1, true)
      if semicolon then
        media = media:sub(1, semicolon - 1)
      end
      local body = ngx.ctx.buffered_body or ""
      if media:find("application/x-www-form-urlencoded", 1, true) == 1 then
        return ngx.decode_args(body, max_args or 100), nil, "application/x-www-form-urlencoded"
      elseif media:find("application/json", 1, true) == 1 then
        local json = cjson.decode_with_array_mt(body)
        if type(json) ~= "table" then
          return nil, "invalid json body", "application/json"
        end
        return json, nil, "application/json"
      elseif media:find("multipart/form-data", 1, true) == 1 then
        -- Kong decodes the parts with lua-multipart (docs/known-differences.md)
        return nil, "multipart/form-data bodies cannot be decoded by the local gateway", "multipart/form-data"
      end
      return nil, "unsupported content type '" .. content_type .. "'", media
    end

    return response
  end,
}
