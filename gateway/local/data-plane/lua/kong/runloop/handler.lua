-- kong/runloop/handler.lua (3.9.3): what Kong itself does around the plugins in each phase:
-- routing and the upstream variables (access), hop-by-hop headers, Kong's response headers
-- (header_filter), and the balancer's data.
local meta = require "kong.meta"
local constants = require "kong.constants"
local router_mod = require "kong.router"
local uri = require "kong.tools.uri"
local dns = require "kong.runloop.dns"
local resty_ctx = require "kong.resty.ctx"
local request_id = require("kong.tools.request_id").get
local share_request_headers = require("kong.tools.request_headers").share

local ngx = ngx
local var = ngx.var
local header = ngx.header
local exec = ngx.exec
local type = type
local rawget = rawget
local tonumber = tonumber
local tostring = tostring
local byte = string.byte
local sub = string.sub
local find = string.find
local gsub = string.gsub
local lower = string.lower
local get_method = ngx.req.get_method
local http_version = ngx.req.http_version
local clear_header = ngx.req.clear_header
local get_headers = ngx.req.get_headers
local escape = uri.escape
local request_path = router_mod.request_path

local SERVER_HEADER = meta._SERVER_TOKENS
local OPENRESTY = "openresty"
-- proxy_http_version 1.1 (the template's)
local OUTBOUND_VIA = "1.1 " .. SERVER_HEADER
-- "<client's HTTP version> kong/3.9.3" (1.0 prints as "1" in LuaJIT)
local INBOUND_VIA_11 = 1.1 .. " " .. SERVER_HEADER
local INBOUND_VIA_10 = 1.0 .. " " .. SERVER_HEADER
local INBOUND_VIA_09 = 0.9 .. " " .. SERVER_HEADER
local INBOUND_VIA_20 = 2.0 .. " " .. SERVER_HEADER
local INBOUND_VIA_30 = 3.0 .. " " .. SERVER_HEADER

-- without a table indexed by floats, which LuaJIT does not compile ("mixed sparse/dense table")
local function inbound_via(version)
  if version == 1.1 then
    return INBOUND_VIA_11
  elseif version == 1.0 then
    return INBOUND_VIA_10
  elseif version == 2.0 then
    return INBOUND_VIA_20
  elseif version == 0.9 then
    return INBOUND_VIA_09
  elseif version == 3.0 then
    return INBOUND_VIA_30
  end
  return SERVER_HEADER
end
local HEADERS = constants.HEADERS
local QUESTION_MARK = byte("?")
local SLASH = byte("/")
local COMMA = byte(",")
local SPACE = byte(" ")

local handler = {}

-- kong/runloop/handler.lua csv: the comma-separated tokens of a header value, lower-cased.
local function csv_tokens(s)
  local tokens = {}
  if type(s) ~= "string" or s == "" then
    return tokens
  end
  s = lower(s)
  if s == "close" or s == "upgrade" or s == "keep-alive" then
    return tokens
  end
  for token in (s .. ","):gmatch("([^,]*),") do
    token = gsub(gsub(token, "^%s+", ""), "%s+$", "")
    if token ~= "" and not (#token == 1 and (byte(token) == SPACE or byte(token) == COMMA)) then
      tokens[#tokens + 1] = token
    end
  end
  return tokens
end
handler.csv_tokens = csv_tokens

--- kong/router/utils.lua sanitize_uri_postfix
local function sanitize_postfix(postfix)
  if not postfix or postfix == "" then
    return postfix
  end
  if postfix == "." or postfix == ".." then
    return ""
  end
  if sub(postfix, 1, 2) == "./" then
    return sub(postfix, 3)
  end
  if sub(postfix, 1, 3) == "../" then
    return sub(postfix, 4)
  end
  return postfix
end

--- kong/router/utils.lua get_upstream_uri_v0: the service path joined with what the route left
-- of the (normalized) request path. The router of 3.9 uses it whatever path_handling says.
local function upstream_uri_v0(strip_path, postfix, req_uri, base)
  if byte(base, -1) == SLASH then
    if strip_path then
      if postfix == "" then
        if base == "/" then
          return "/"
        end
        if byte(req_uri, -1) == SLASH then
          return base
        end
        return sub(base, 1, -2)
      end
      if byte(postfix, 1) == SLASH then
        return sub(base, 1, -2) .. postfix
      end
      return base .. postfix
    end
    return base .. sub(req_uri, 2)
  end

  if strip_path then
    if postfix == "" then
      if #req_uri > 1 and byte(req_uri, -1) == SLASH then
        return base .. "/"
      end
      return base
    end
    if byte(postfix, 1) == SLASH then
      return base .. postfix
    end
    return base .. "/" .. postfix
  end

  if req_uri == "/" then
    return base
  end
  return base .. req_uri
end
handler.upstream_uri_v0 = upstream_uri_v0

function handler.upstream_uri(route, service, matched_path, req_path)
  local prefix = route.strip_path and matched_path or nil
  local postfix = sanitize_postfix(sub(req_path, #(prefix or "/") + 1))
  local base = service and service.path or "/"
  return upstream_uri_v0(route.strip_path, postfix, req_path, base), prefix
end

--- kong/runloop/handler.lua balancer_prepare (the address kind comes from the router's matcher;
-- a route without a service gets Kong's defaults, and a 503 after the plugins)
local function balancer_prepare(ctx, service, m)
  local balancer_data = {
    scheme = service and service.protocol,
    type = m.host_type,
    ip = m.host_ip,
    ip_of = service and service.host,
    host = service and service.host,
    port = service and service.port,
    try_count = 0,
    retries = service and service.retries or 5,
    connect_timeout = service and service.connect_timeout or 60000,
    send_timeout = service and service.write_timeout or 60000,
    read_timeout = service and service.read_timeout or 60000,
    tries = {},
  }
  ctx.balancer_data = balancer_data
  return balancer_data
end

--- kong/runloop/balancer/init.lua execute for a service without an upstream: the address
-- (IP literals as they are, names through DNS). Returns true or nil, message, status.
local function balancer_execute(balancer_data)
  local host = balancer_data.host
  local host_type = balancer_data.type
  if host_type ~= "name" then
    -- kong.service.set_target may have changed the host since the router's matcher
    if not balancer_data.ip or balancer_data.ip_of ~= host then
      balancer_data.ip = host_type == "ipv6" and gsub(host, "^%[(.*)%]$", "%1") or host
    end
    balancer_data.hostname = host
    return true
  end

  local ip, err = dns.toip(host)
  if not ip then
    if err == "dns server error: 3 name error" or err == "dns client error: 101 empty record received" then
      return nil, "name resolution failed", 503
    end
    return nil, "failed the initial dns/balancer resolve for '" .. host .. "' with: " .. tostring(err), 500
  end
  balancer_data.ip = ip
  balancer_data.hostname = host
  return true
end

--- kong/runloop/balancer/init.lua set_host_header: $upstream_host, unless preserve_host set it.
local function set_host_header(balancer_data, scheme)
  if balancer_data.preserve_host then
    return
  end
  local host = balancer_data.hostname
  local port = balancer_data.port
  if (port ~= 80 and port ~= 443) or (port == 80 and scheme ~= "http") or (port == 443 and scheme ~= "https") then
    host = host .. ":" .. port
  end
  var.upstream_host = host
end

-- Kong pools upstream connections by ip|port, and an https service's by ip|port|sni
-- (kong/init.lua:1383-1392). nginx's keepalive cache (per worker, as this table) knows the
-- address only: an https request keeps alive (kong_upstream_tls) only when it sends the first
-- SNI this worker sent to its address, so a cached connection always carries the request's SNI;
-- another SNI gets a connection of its own (kong_upstream_tls_once).
local tls_pool_sni = {}

local function set_tls_upstream(balancer_data)
  local sni = var.upstream_host
  local pool = balancer_data.ip .. "|" .. balancer_data.port
  local owner = tls_pool_sni[pool]
  if owner == nil then
    tls_pool_sni[pool] = sni
    owner = sni
  end
  var.kong_upstream = owner == sni and "kong_upstream_tls" or "kong_upstream_tls_once"
end

handler.rewrite = {
  before = function(ctx)
    ctx.host_port = tonumber(var.server_port, 10)
    -- $kong_request_id, as lua-kong-nginx-module has it for nginx and for ngx.var readers
    var.kong_request_id = request_id(ctx)
  end,
}

--- kong/tools/http.lua get_header(name, ctx): a request header's first value from
-- ngx.req.get_headers(), read once per request into ctx.cached_request_headers, as Kong's
-- runloop reads them. `name` is already lowercase with dashes (the table's own keys), so the
-- lookup needs none of the table's name-normalizing metamethod.
local function request_header(ctx, name)
  local headers = ctx.cached_request_headers
  if not headers then
    local err
    headers, err = get_headers()
    ctx.cached_request_headers = headers
    share_request_headers(ctx, headers, err)
  end
  local value = rawget(headers, name)
  if type(value) == "table" then
    return value[1]
  end
  return value
end
handler.request_header = request_header

handler.access = {
  --- Routes the request; answers 404 (no route) or 426 itself; sets the upstream variables.
  -- nginx.conf's location sets the values most requests send (Connection: keep-alive,
  -- X-Forwarded-For: $remote_addr, X-Forwarded-Proto: $scheme, X-Forwarded-Port: $server_port);
  -- they are written here only when Kong's differ.
  before = function(ctx, runtime, is_trusted, trusts_anyone)
    local scheme = var.scheme
    ctx.scheme = scheme
    local request_uri = var.request_uri
    ctx.request_uri = request_uri

    local req_path = request_path(request_uri)
    local host_header = request_header(ctx, "host")
    local router = runtime.router
    -- fields.lua:109-116 tls.sni: the client's server name as sent, a trailing dot kept
    local sni = scheme == "https" and var.ssl_server_name or nil
    if sni == "" then
      sni = nil
    end
    local m, matched_path, captures = router:select(get_method(), req_path, host_header, ctx.host_port, get_headers,
                                                    scheme, sni)
    if not m then
      return kong.response.error(404, "no Route matched with those values")
    end

    local route, service = m.route, m.service
    local upstream_uri, prefix = handler.upstream_uri(route, service, matched_path, req_path)

    -- with trusted_ips, a trusted client's X-Forwarded-* headers are passed on
    local realip_remote_addr
    local forwarded_proto, forwarded_host, forwarded_port, forwarded_path, forwarded_prefix
    if trusts_anyone then
      realip_remote_addr = var.realip_remote_addr
      if is_trusted(realip_remote_addr) then
        forwarded_proto = request_header(ctx, "x-forwarded-proto")
        forwarded_host = request_header(ctx, "x-forwarded-host")
        forwarded_port = request_header(ctx, "x-forwarded-port")
        forwarded_path = request_header(ctx, "x-forwarded-path")
        forwarded_prefix = request_header(ctx, "x-forwarded-prefix")
      end
    end

    if not forwarded_path then
      forwarded_path = request_uri
      local q = find(forwarded_path, "?", 2, true)
      if q then
        forwarded_path = sub(forwarded_path, 1, q - 1)
      end
    end

    if not forwarded_prefix and prefix ~= "/" then
      forwarded_prefix = prefix
    end

    -- route.protocols is a set (Kong's schema gives sets a lookup by value)
    local protocols = route.protocols
    if protocols.https and not protocols.http and (forwarded_proto or scheme) ~= "https" then
      local code = route.https_redirect_status_code or 426
      if code == 426 then
        return kong.response.error(426, "Please use HTTPS protocol", {
          ["Connection"] = "Upgrade",
          ["Upgrade"] = "TLS/1.2, HTTP/1.1",
        })
      end
      if code == 301 or code == 302 or code == 307 or code == 308 then
        header["Location"] = "https://" .. (forwarded_host or var.host) .. request_uri
        return kong.response.exit(code)
      end
    end

    balancer_prepare(ctx, service, m)
    ctx.service = service
    ctx.route = route
    if captures then
      -- kong/router/atc.lua has_capture: only when there is more than the whole match
      local first = next(captures)
      if first ~= nil and next(captures, first) ~= nil then
        ctx.router_matches = { uri_captures = captures }
      end
    end

    var.upstream_scheme = service and service.protocol or ""
    var.upstream_uri = escape(upstream_uri)
    if route.preserve_host and host_header then
      var.upstream_host = host_header
    end

    local upgrade = request_header(ctx, "upgrade")
    if upgrade and lower(upgrade) == "websocket" then
      var.upstream_connection = "keep-alive, Upgrade"
      var.upstream_upgrade = "websocket"
    end

    local x_forwarded_for = request_header(ctx, "x-forwarded-for")
    if x_forwarded_for then
      var.upstream_x_forwarded_for = x_forwarded_for .. ", " .. (realip_remote_addr or var.realip_remote_addr)
    end

    if forwarded_proto then
      var.upstream_x_forwarded_proto = forwarded_proto
    end
    var.upstream_x_forwarded_host = forwarded_host or var.host
    if forwarded_port then
      var.upstream_x_forwarded_port = forwarded_port
    end
    var.upstream_x_forwarded_path = forwarded_path
    if forwarded_prefix then
      var.upstream_x_forwarded_prefix = forwarded_prefix
    end

    local via = request_header(ctx, "via")
    local inbound = inbound_via(http_version())
    var.upstream_via = via and (via .. ", " .. inbound) or inbound

    -- routes that do not buffer proxy from their own locations: the request continues there
    -- (rewrite and access run again, with this ctx)
    if service and not ctx.unbuffered_location then
      local target
      if route.request_buffering == false then
        target = route.response_buffering == false and "@unbuffered" or "@unbuffered_request"
      elseif route.response_buffering == false then
        target = "@unbuffered_response"
      end
      if target then
        resty_ctx.stash_ref()
        return exec(target)
      end
    end
  end,

  --- Resolves the service's address and sets Host; clears hop-by-hop request headers.
  after = function(ctx)
    local args = var.args
    if byte(ctx.request_uri, -1) == QUESTION_MARK or (args and args ~= "") then
      var.upstream_uri = var.upstream_uri .. "?" .. (args or "")
    end

    local balancer_data = ctx.balancer_data
    local upstream_scheme = var.upstream_scheme
    balancer_data.scheme = upstream_scheme

    local upstream_host = var.upstream_host
    if upstream_host ~= nil and upstream_host ~= "" then
      balancer_data.preserve_host = true
    end

    local ok, err, status = balancer_execute(balancer_data)
    if not ok then
      return kong.response.error(status, err)
    end
    set_host_header(balancer_data, upstream_scheme)
    if upstream_scheme == "https" then
      set_tls_upstream(balancer_data)
    end

    local connection = request_header(ctx, "connection")
    if connection and connection ~= "keep-alive" and connection ~= "close" and connection ~= "upgrade" then
      for _, name in ipairs(csv_tokens(connection)) do
        if name == "upgrade" then
          if var.upstream_connection == "keep-alive" then
            clear_header(name)
          end
        else
          clear_header(name)
        end
      end
    end

    local te = request_header(ctx, "te")
    if te then
      if te == "trailers" then
        var.upstream_te = "trailers"
      else
        for _, name in ipairs(csv_tokens(te)) do
          if name == "trailers" then
            var.upstream_te = "trailers"
            break
          end
        end
      end
    end

    if request_header(ctx, "proxy") then
      clear_header("Proxy")
    end
    if request_header(ctx, "proxy-connection") then
      clear_header("Proxy-Connection")
    end
  end,
}

handler.header_filter = {
  before = function(ctx)
    if not ctx.KONG_PROXIED then
      return
    end

    local upstream_connection = var.upstream_http_connection
    if upstream_connection ~= "keep-alive" and upstream_connection ~= "close" and upstream_connection ~= "upgrade" then
      for _, name in ipairs(csv_tokens(upstream_connection)) do
        if name ~= "close" and name ~= "upgrade" and name ~= "keep-alive" then
          header[name] = nil
        end
      end
    end

    local upgrade = var.upstream_http_upgrade
    if upgrade and lower(upgrade) ~= lower(var.upstream_upgrade) then
      header["Upgrade"] = nil
    end

    if var.upstream_te == "" and var.upstream_http_trailer then
      header["Trailer"] = nil
    end

    local enabled = kong.configuration.enabled_headers
    if enabled[HEADERS.UPSTREAM_STATUS] then
      header[HEADERS.UPSTREAM_STATUS] = tonumber(sub(var.upstream_status or "", -3)) or ngx.status
    end

    local status = ngx.status
    local balancer_data = ctx.balancer_data
    if status > 499 and balancer_data then
      local try_count = balancer_data.try_count
      if try_count > balancer_data.retries then
        local current = balancer_data.tries[try_count]
        if current then
          current.state = "failed"
          current.code = status
        end
      end
    end
  end,

  after = function(ctx)
    local enabled = kong.configuration.enabled_headers
    if ctx.KONG_PROXIED then
      if enabled[HEADERS.UPSTREAM_LATENCY] then
        header[HEADERS.UPSTREAM_LATENCY] = ctx.KONG_WAITING_TIME
      end
      if enabled[HEADERS.PROXY_LATENCY] then
        header[HEADERS.PROXY_LATENCY] = ctx.KONG_PROXY_LATENCY
      end
      if enabled[HEADERS.VIA] then
        local upstream_via = var.upstream_http_via
        header[HEADERS.VIA] = upstream_via and (upstream_via .. ", " .. OUTBOUND_VIA) or OUTBOUND_VIA
      end
      -- without a Server from the upstream nginx would name itself: Kong names Kong (or, with
      -- server_tokens off, Kong's nginx names itself "openresty", where Debian's says "nginx")
      if not header[HEADERS.SERVER] then
        header[HEADERS.SERVER] = enabled[HEADERS.SERVER] and SERVER_HEADER or OPENRESTY
      end

    else
      if enabled[HEADERS.RESPONSE_LATENCY] then
        header[HEADERS.RESPONSE_LATENCY] = ctx.KONG_RESPONSE_LATENCY
      end
      -- without server_tokens Kong clears it: ngx_lua keeps the cleared header's slot, so
      -- nginx adds no Server of its own either
      if not (enabled[HEADERS.VIA] and header[HEADERS.VIA] == SERVER_HEADER) then
        if enabled[HEADERS.SERVER] then
          header[HEADERS.SERVER] = SERVER_HEADER
        else
          header[HEADERS.SERVER] = nil
        end
      elseif not header[HEADERS.SERVER] then
        header[HEADERS.SERVER] = OPENRESTY
      end
    end

    if enabled[HEADERS.REQUEST_ID] then
      header[HEADERS.REQUEST_ID] = request_id(ctx)
    end
  end,
}

handler.balancer_execute = balancer_execute
handler.set_host_header = set_host_header

return handler
