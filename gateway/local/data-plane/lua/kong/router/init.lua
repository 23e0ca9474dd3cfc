-- Kong 3.9.3's `traditional_compatible` router (kong/router/atc.lua + transform.lua) without the
-- ATC engine: each route becomes one matcher per group of paths (all regex paths together, the
-- prefixes grouped by length: transform.lua split_routes_and_services_by_path), each with the
-- priority transform.lua get_priority computes, tried from the highest priority down; equal
-- priorities are tried in descending order of the matcher's UUID, as atc-router 1.6.2's
-- BTreeMap<(priority, uuid)> iterated in reverse does (src/router.rs). A matcher holds the
-- route's conditions: method, host (Host header as sent, without its port; `*.x` and `x.*`
-- wildcards; `host:port` also compares the local port), headers (any value, lower-cased, `~*`
-- for a regex), and its path group: prefixes, or regexes anchored at the start (PCRE, "jo").
-- A route's snis apply to requests over TLS only (transform.lua get_expression: net.protocol !=
-- "https" || tls.sni ...): the client's server name, `*.x` by suffix, `x.*` by prefix.
local bit = require "bit"
local ffi = require "ffi"
local normalize = require("kong.tools.uri").normalize
local uuid_v5 = require "kong.router.uuid_v5"
local hostname_type = require("kong.tools.ip").hostname_type

local bor = bit.bor
local band = bit.band
local lshift = bit.lshift
local re_match = ngx.re.match
local re_find = ngx.re.find
local byte = string.byte
local sub = string.sub
local find = string.find
local lower = string.lower
local gsub = string.gsub
local type = type
local pairs = pairs
local ipairs = ipairs
local tonumber = tonumber
local sort = table.sort

local TILDE = byte("~")
local ASTERISK = byte("*")

local router = {}

--- transform.lua split_host_port: "example.com:123" → "example.com", 123.
local function split_host_port(value)
  local colon = find(value, ":", 1, true)
  if not colon then
    return value, nil
  end
  local port = tonumber(sub(value, colon + 1))
  if not port then
    return value, nil
  end
  return sub(value, 1, colon - 1), port
end
router.split_host_port = split_host_port

local function is_regex(path)
  return byte(path) == TILDE
end

local function is_empty(t)
  return t == nil or next(t) == nil
end

local function count_keys(t)
  local n = 0
  for _ in pairs(t) do
    n = n + 1
  end
  return n
end

-- transform.lua get_priority, operation for operation. Its lshift_uint64 assigns the value to
-- the upvalue meant to hold a uint64 cdata, so shifts of plain numbers are LuaJIT's 32-bit
-- ones (61 → 29, 52 → 20, 19 → 19) while the 0x01ULL constants shift as 64-bit values: the
-- plain-host (bit 60) and regex (bit 51) flags outweigh the match weight. Doing the same
-- operations here gives the same numbers; ffi then converts them to the uintptr_t atc-router
-- receives.
local function lshift_uint64(v, offset)
  return lshift(v, offset)
end

local DOT = byte(".")

local PLAIN_HOST_ONLY_BIT = lshift_uint64(0x01ULL, 60)
local REGEX_URL_BIT = lshift_uint64(0x01ULL, 51)
local MAX_HEADER_COUNT = 255

local function get_priority(route, paths)
  local match_weight = 0
  if not is_empty(route.methods) then
    match_weight = match_weight + 1
  end
  local hosts = route.hosts
  if not is_empty(hosts) then
    match_weight = match_weight + 1
  end
  local headers_count = is_empty(route.headers) and 0 or count_keys(route.headers)
  if headers_count > 0 then
    match_weight = match_weight + 1
    if headers_count > MAX_HEADER_COUNT then
      headers_count = MAX_HEADER_COUNT
    end
  end
  if not is_empty(route.snis) then
    match_weight = match_weight + 1
  end

  local plain_host_only = type(hosts) == "table"
  if plain_host_only then
    for _, h in ipairs(hosts) do
      if find(h, "*", 1, true) then
        plain_host_only = false
        break
      end
    end
  end

  local uri_length = 0
  local regex_url = false
  if not is_empty(paths) then
    match_weight = match_weight + 1
    if is_regex(paths[1]) then
      regex_url = true
    else
      uri_length = #paths[1]
    end
  end

  local priority = bor(lshift_uint64(match_weight, 61),
                       plain_host_only and PLAIN_HOST_ONLY_BIT or 0,
                       regex_url and REGEX_URL_BIT or 0,
                       lshift_uint64(headers_count, 52),
                       lshift_uint64(regex_url and route.regex_priority or 0, 19),
                       band(uri_length, 0x7FFFF))
  return ffi.new("uint64_t", priority)
end
router.get_priority = get_priority

--- transform.lua group_by_regex_or_length: regexes in one group, prefixes by length, in the
-- order their first member appears.
local function group_paths(paths)
  local groups, by_key = {}, {}
  for _, path in ipairs(paths) do
    local key = is_regex(path) and 0 or #path
    local group = by_key[key]
    if not group then
      group = {}
      by_key[key] = group
      groups[#groups + 1] = group
    end
    group[#group + 1] = path
  end
  return groups
end

-- the namespace transform.lua derives split routes' ids from (uuid v5 of "<id>#<index>")
local SPLIT_ROUTE_NAMESPACE = "7f145bf9-0dce-4f91-98eb-debbce4b9f6b"

local function host_matchers(hosts)
  local exact, wildcards = nil, nil
  for _, h in ipairs(hosts) do
    local host, port = split_host_port(h)
    local matcher
    if byte(host) == ASTERISK then
      matcher = { suffix = sub(host, 2), port = port }
    elseif byte(host, -1) == ASTERISK then
      matcher = { prefix = sub(host, 1, -2), port = port }
    elseif port then
      matcher = { exact = host, port = port }
    end
    if matcher then
      wildcards = wildcards or {}
      wildcards[#wildcards + 1] = matcher
    else
      exact = exact or {}
      exact[host] = true
    end
  end
  return exact, wildcards
end

--- transform.lua:281-314 sni_op_transform and sni_val_transform: `*.x` matches by suffix, `x.*`
-- by prefix, others exactly. The trailing dot of a route's value is dropped before its `*` is
-- (`*.x.` is the suffix `.x`); the client's server name is compared as sent (fields.lua:109-116).
local function sni_matchers(snis)
  local exact, suffixes, prefixes = {}, {}, {}
  for _, sni in ipairs(snis) do
    local is_suffix = byte(sni) == ASTERISK
    if not is_suffix and byte(sni, -1) == ASTERISK then
      prefixes[#prefixes + 1] = sub(sni, 1, -2)
    else
      if #sni > 1 and byte(sni, -1) == DOT then
        sni = sub(sni, 1, -2)
      end
      if is_suffix then
        suffixes[#suffixes + 1] = sub(sni, 2)
      else
        exact[sni] = true
      end
    end
  end
  return { exact = exact, suffixes = suffixes, prefixes = prefixes }
end

local function sni_matches(s, sni)
  if s.exact[sni] then
    return true
  end
  for _, suffix in ipairs(s.suffixes) do
    if #sni > #suffix and sub(sni, -#suffix) == suffix then
      return true
    end
  end
  for _, prefix in ipairs(s.prefixes) do
    if sub(sni, 1, #prefix) == prefix then
      return true
    end
  end
  return false
end

local function header_matchers(headers)
  local list = {}
  for name, values in pairs(headers) do
    local equals, regexes = {}, nil
    for _, value in ipairs(values) do
      if byte(value, 1) == TILDE and byte(value, 2) == ASTERISK then
        regexes = regexes or {}
        regexes[#regexes + 1] = lower(sub(value, 3))
      else
        equals[lower(value)] = true
      end
    end
    list[#list + 1] = { name = gsub(lower(name), "-", "_"), equals = equals, regexes = regexes }
  end
  return list
end

local function new_matcher(route, service, paths, id)
  local m = {
    route = route,
    service = service,
    id = id,
    priority = get_priority(route, paths),
  }

  -- the service's address kind, once (kong/tools/ip.lua hostname_type)
  if service then
    m.host_type = hostname_type(service.host)
    if m.host_type == "ipv6" then
      m.host_ip = gsub(service.host, "^%[(.*)%]$", "%1")
    elseif m.host_type == "ipv4" then
      m.host_ip = service.host
    end
  end

  if not is_empty(route.methods) then
    m.methods = {}
    for _, method in ipairs(route.methods) do
      m.methods[method] = true
    end
  end

  if not is_empty(route.hosts) then
    m.exact_hosts, m.wildcard_hosts = host_matchers(route.hosts)
  end

  if not is_empty(route.headers) then
    m.headers = header_matchers(route.headers)
  end

  if not is_empty(route.snis) then
    m.snis = sni_matchers(route.snis)
  end

  if paths then
    if is_regex(paths[1]) then
      m.regexes = {}
      for i, path in ipairs(paths) do
        m.regexes[i] = "^" .. sub(path, 2)
      end
    else
      m.prefixes = paths
    end
  end

  return m
end

local function by_priority(a, b)
  if a.priority == b.priority then
    return a.id > b.id
  end
  return a.priority > b.priority
end

--- A router over { route = route, service = service|nil } pairs (routes of disabled services
-- already left out, as kong/runloop/handler.lua new_router leaves them). Regexes that PCRE
-- cannot compile are an error naming the route.
function router.new(routes_and_services)
  local matchers = {}
  local uses_headers = false

  for _, rs in ipairs(routes_and_services) do
    local route, service = rs.route, rs.service
    local paths = route.paths
    if is_empty(paths) then
      matchers[#matchers + 1] = new_matcher(route, service, nil, route.id)
    else
      local groups = group_paths(paths)
      for i, group in ipairs(groups) do
        local id = #groups == 1 and route.id or uuid_v5(SPLIT_ROUTE_NAMESPACE, route.id .. "#" .. i)
        matchers[#matchers + 1] = new_matcher(route, service, group, id)
      end
    end
    uses_headers = uses_headers or not is_empty(route.headers)
  end

  for _, m in ipairs(matchers) do
    for _, regex in ipairs(m.regexes or {}) do
      local _, _, err = re_find("", regex, "jo")
      if err then
        return nil, "route " .. m.route.id .. ": invalid regex path " .. regex .. ": " .. err
      end
    end
    for _, h in ipairs(m.headers or {}) do
      for _, regex in ipairs(h.regexes or {}) do
        local _, _, err = re_find("", regex, "jo")
        if err then
          return nil, "route " .. m.route.id .. ": invalid regex for header " .. h.name .. ": " .. err
        end
      end
    end
  end

  sort(matchers, by_priority)

  return setmetatable({
    matchers = matchers,
    n = #matchers,
    uses_headers = uses_headers,
    cache = {},
    cached = 0,
  }, { __index = router })
end

local function host_matches(m, host, port)
  local exact = m.exact_hosts
  if exact and exact[host] then
    return true
  end
  local wildcards = m.wildcard_hosts
  if wildcards then
    for i = 1, #wildcards do
      local w = wildcards[i]
      if not w.port or w.port == port then
        if w.exact then
          if w.exact == host then
            return true
          end
        elseif w.suffix then
          local n = #w.suffix
          if #host >= n and sub(host, -n) == w.suffix then
            return true
          end
        elseif sub(host, 1, #w.prefix) == w.prefix then
          return true
        end
      end
    end
  end
  return false
end

local function header_value_matches(h, value)
  value = lower(value)
  if h.equals[value] then
    return true
  end
  local regexes = h.regexes
  if regexes then
    for i = 1, #regexes do
      if re_find(value, regexes[i], "jo") then
        return true
      end
    end
  end
  return false
end

local function headers_match(m, headers)
  local list = m.headers
  for i = 1, #list do
    local h = list[i]
    local value = headers[h.name]
    if value == nil then
      return false
    end
    if type(value) == "table" then
      local any = false
      for j = 1, #value do
        if header_value_matches(h, value[j]) then
          any = true
          break
        end
      end
      if not any then
        return false
      end
    elseif not header_value_matches(h, value) then
      return false
    end
  end
  return true
end

--- The path the router sees: the request target without its query, normalized (slashes merged).
function router.request_path(request_uri)
  local q = find(request_uri, "?", 2, true)
  if q then
    request_uri = sub(request_uri, 1, q - 1)
  end
  return normalize(request_uri, true)
end

--- The first matcher (highest priority) for a request: method, normalized path, Host header
-- (with its port, if any), the local port, a function returning the request headers
-- (called only when a route has header conditions), the request's scheme and the TLS server
-- name the client sent (nil without one). Returns the matcher, the part of the path it matched,
-- and the regex captures (nil for a prefix or no path).
local function find_match(self, method, path, host_header, local_port, get_headers, scheme, sni)
  local host, host_port = nil, nil
  if host_header then
    host, host_port = split_host_port(host_header)
  end
  local port = host_port or local_port
  local headers

  local matchers = self.matchers
  for i = 1, self.n do
    local m = matchers[i]
    if (not m.methods or m.methods[method])
      and (not (m.exact_hosts or m.wildcard_hosts) or (host and host_matches(m, host, port)))
      and (not m.snis or scheme ~= "https" or (sni and sni_matches(m.snis, sni)))
    then
      local ok = true
      if m.headers then
        -- ngx.req.get_headers(): `x_foo` also finds `x-foo`, as Kong's http.headers.x_foo does
        headers = headers or get_headers()
        ok = headers_match(m, headers)
      end

      if ok then
        local prefixes = m.prefixes
        if prefixes then
          for j = 1, #prefixes do
            local prefix = prefixes[j]
            if sub(path, 1, #prefix) == prefix then
              return m, prefix, nil
            end
          end

        else
          local regexes = m.regexes
          if regexes then
            for j = 1, #regexes do
              local captures = re_match(path, regexes[j], "jo")
              if captures then
                return m, captures[0], captures
              end
            end
          else
            return m, nil, nil
          end
        end
      end
    end
  end

  return nil
end

-- Kong's router keeps its matches, and its misses, in LRU caches of DEFAULT_MATCH_LRUCACHE_SIZE
-- by what the request's routed fields are (kong/router/atc.lua exec, fields.lua
-- get_cache_key). Here: by method, Host header, local port, scheme, server name and path, on
-- the router, so a new snapshot (a new router) starts empty; past CACHE_SIZE entries the cache
-- starts over, so that whatever clients send, it stays bounded. Routes with header conditions
-- match on more than these: with any, nothing is cached.
local CACHE_SIZE = 5000
local MISS = {}

function router:select(method, path, host_header, local_port, get_headers, scheme, sni)
  if self.uses_headers then
    return find_match(self, method, path, host_header, local_port, get_headers, scheme, sni)
  end

  local key = method .. "|" .. (host_header or "") .. "|" .. (local_port or "") .. "|" .. (scheme or "") .. "|"
              .. (sni or "") .. "|" .. path
  local cache = self.cache
  local hit = cache[key]
  if hit then
    if hit == MISS then
      return nil
    end
    return hit[1], hit[2], hit[3]
  end

  local m, matched_path, captures = find_match(self, method, path, host_header, local_port, get_headers,
                                               scheme, sni)
  local cached = self.cached
  if cached >= CACHE_SIZE then
    cache = {}
    self.cache = cache
    cached = 0
  end
  cache[key] = m and { m, matched_path, captures } or MISS
  self.cached = cached + 1
  return m, matched_path, captures
end

return router
