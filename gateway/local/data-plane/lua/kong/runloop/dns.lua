-- Name resolution for service hosts, as Kong's DNS client (kong/resty/dns/client.lua) does it
-- for a plain service: /etc/hosts first, then A (and AAAA) queries over UDP to the
-- nameservers of /etc/resolv.conf, answers cached for their TTL and rotated. Runs where
-- cosockets may (access); the balancer phase only reuses what access resolved.
local bit = require "bit"

local band, rshift = bit.band, bit.rshift
local byte, char, sub, format = string.byte, string.char, string.sub, string.format
local concat = table.concat
local random = math.random
local udp = ngx.socket.udp
local log = ngx.log
local WARN = ngx.WARN

local TYPE_A, TYPE_AAAA = 1, 28
local QUERY_TIMEOUT_MS = 2000
local MAX_CACHE = 1024

local hosts = {}
local nameservers = {}
local cache, cached = {}, 0
local now = ngx.now

local dns = {}

local function read_lines(path)
  local file = io.open(path, "r")
  if not file then
    return {}
  end
  local lines = {}
  for line in file:lines() do
    lines[#lines + 1] = line
  end
  file:close()
  return lines
end

--- Reads /etc/hosts and /etc/resolv.conf (init). `clock` is the real clock (the test clock
-- must not age DNS answers).
function dns.init(clock)
  now = clock or ngx.now
  hosts, nameservers = {}, {}
  for _, line in ipairs(read_lines("/etc/hosts")) do
    line = line:gsub("#.*$", "")
    local address, names = line:match("^%s*(%S+)%s+(.+)$")
    if address then
      local family = address:find(":", 1, true) and "ipv6" or "ipv4"
      for name in names:gmatch("%S+") do
        name = name:lower()
        local entry = hosts[name] or {}
        hosts[name] = entry
        if not entry[family] then
          entry[family] = address
        end
      end
    end
  end
  for _, line in ipairs(read_lines("/etc/resolv.conf")) do
    local server = line:match("^%s*nameserver%s+(%S+)")
    if server then
      nameservers[#nameservers + 1] = server
    end
  end
end

local function encode_name(name)
  local parts = {}
  for label in name:gmatch("[^.]+") do
    parts[#parts + 1] = char(#label) .. label
  end
  return concat(parts) .. "\0"
end

local function u16(s, i)
  local a, b = byte(s, i, i + 1)
  return a * 256 + b
end

local function u32(s, i)
  return u16(s, i) * 65536 + u16(s, i + 2)
end

-- the offset after a (possibly compressed) name starting at i
local function skip_name(s, i)
  while true do
    local len = byte(s, i)
    if not len then
      return nil
    end
    if len == 0 then
      return i + 1
    end
    if band(len, 0xC0) == 0xC0 then
      return i + 2
    end
    i = i + 1 + len
  end
end

local function format_address(qtype, rdata)
  if qtype == TYPE_A then
    return format("%d.%d.%d.%d", byte(rdata, 1, 4))
  end
  local groups = {}
  for i = 1, 16, 2 do
    groups[#groups + 1] = format("%x", u16(rdata, i))
  end
  return concat(groups, ":")
end

--- One query to one server: addresses and the smallest TTL, or nil and Kong's error text.
local function query(server, name, qtype)
  local sock = udp()
  sock:settimeout(QUERY_TIMEOUT_MS)
  local ok, err = sock:setpeername(server, 53)
  if not ok then
    return nil, "dns client error: " .. tostring(err)
  end

  local id = random(0, 65535)
  local packet = char(rshift(id, 8), band(id, 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0)
                 .. encode_name(name) .. char(0, qtype, 0, 1)
  ok, err = sock:send(packet)
  if not ok then
    sock:close()
    return nil, "dns client error: " .. tostring(err)
  end

  local answer
  answer, err = sock:receive()
  sock:close()
  if not answer then
    return nil, "dns client error: " .. tostring(err)
  end
  if #answer < 12 or u16(answer, 1) ~= id then
    return nil, "dns client error: malformed answer"
  end

  local rcode = band(byte(answer, 4), 0x0F)
  if rcode ~= 0 then
    local names = { [1] = "format error", [2] = "server failure", [3] = "name error", [4] = "not implemented", [5] = "refused" }
    return nil, "dns server error: " .. rcode .. " " .. (names[rcode] or "unknown")
  end

  local qdcount, ancount = u16(answer, 5), u16(answer, 7)
  local i = 13
  for _ = 1, qdcount do
    i = skip_name(answer, i)
    if not i then
      return nil, "dns client error: malformed answer"
    end
    i = i + 4
  end

  local addresses, ttl = {}, nil
  for _ = 1, ancount do
    i = skip_name(answer, i)
    if not i or i + 10 > #answer then
      break
    end
    local rtype, rttl, rdlength = u16(answer, i), u32(answer, i + 4), u16(answer, i + 8)
    local rdata = sub(answer, i + 10, i + 9 + rdlength)
    if rtype == qtype and #rdata == (qtype == TYPE_A and 4 or 16) then
      addresses[#addresses + 1] = format_address(qtype, rdata)
      ttl = ttl and math.min(ttl, rttl) or rttl
    end
    i = i + 10 + rdlength
  end

  if #addresses == 0 then
    return nil, "dns client error: 101 empty record received"
  end
  return addresses, ttl
end

local function resolve(name)
  local last_err = "dns client error: no nameservers in /etc/resolv.conf"
  for _, qtype in ipairs({ TYPE_A, TYPE_AAAA }) do
    for _, server in ipairs(nameservers) do
      local addresses, ttl_or_err = query(server, name, qtype)
      if addresses then
        return addresses, ttl_or_err
      end
      last_err = ttl_or_err
      -- an authoritative "no such name" needs no second opinion
      if ttl_or_err:find("3 name error", 1, true) then
        return nil, last_err
      end
    end
  end
  return nil, last_err
end

--- The address to connect to for `name`, or nil and the resolver's error.
function dns.toip(name)
  local key = name:lower()
  local entry = hosts[key]
  if entry then
    return entry.ipv4 or entry.ipv6
  end

  local c = cache[key]
  local t = now()
  if c and c.expires > t then
    c.next = c.next % #c.addresses + 1
    return c.addresses[c.next]
  end

  local addresses, ttl_or_err = resolve(key)
  if not addresses then
    log(WARN, "DNS resolution of ", name, " failed: ", ttl_or_err)
    return nil, ttl_or_err
  end

  if cached >= MAX_CACHE then
    cache, cached = {}, 0
  end
  cache[key] = { addresses = addresses, expires = t + math.max(ttl_or_err, 1), next = 1 }
  cached = cached + 1
  return addresses[1]
end

return dns
