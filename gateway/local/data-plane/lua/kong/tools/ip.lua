-- Address helpers: what kong/tools/ip.lua and resty.ipmatcher give Kong, for kong.ip.is_trusted
-- and the balancer (is a service host an IP literal or a name?).
local byte = string.byte
local char = string.char
local find = string.find
local match = string.match
local sub = string.sub
local gmatch = string.gmatch
local tonumber = tonumber
local concat = table.concat

local ip = {}

--- 4 bytes for a dotted quad, or nil.
local function parse_ipv4(s)
  local a, b, c, d = match(s, "^(%d%d?%d?)%.(%d%d?%d?)%.(%d%d?%d?)%.(%d%d?%d?)$")
  if not a then
    return nil
  end
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if a > 255 or b > 255 or c > 255 or d > 255 then
    return nil
  end
  return char(a, b, c, d)
end

--- 16 bytes for an IPv6 address (with `::` and a trailing dotted quad allowed), or nil.
local function parse_ipv6(s)
  if find(s, "[^%x:%.]") then
    return nil
  end

  local tail4
  local last_colon = match(s, "^.*():")
  if not last_colon then
    return nil
  end
  if find(s, ".", last_colon, true) then
    tail4 = parse_ipv4(sub(s, last_colon + 1))
    if not tail4 then
      return nil
    end
    s = sub(s, 1, last_colon) .. "0:0"
  end

  local head, rest = s, nil
  local dc = find(s, "::", 1, true)
  if dc then
    if find(s, "::", dc + 1, true) then
      return nil
    end
    head, rest = sub(s, 1, dc - 1), sub(s, dc + 2)
  end

  local groups = {}
  local function collect(part, into)
    if part == "" then
      return true
    end
    for g in gmatch(part .. ":", "([^:]*):") do
      if g == "" or #g > 4 then
        return false
      end
      into[#into + 1] = tonumber(g, 16)
    end
    return true
  end

  local before, after = {}, {}
  if not collect(head, before) or (rest and not collect(rest, after)) then
    return nil
  end
  local missing = 8 - #before - #after
  if (dc and missing < 1) or (not dc and missing ~= 0) then
    return nil
  end
  for _, g in ipairs(before) do groups[#groups + 1] = g end
  for _ = 1, missing do groups[#groups + 1] = 0 end
  for _, g in ipairs(after) do groups[#groups + 1] = g end

  local bytes = {}
  for i = 1, 8 do
    local g = groups[i]
    bytes[i] = char(math.floor(g / 256), g % 256)
  end
  local packed = concat(bytes)
  if tail4 then
    packed = sub(packed, 1, 12) .. tail4
  end
  return packed
end

ip.parse_ipv4 = parse_ipv4
ip.parse_ipv6 = parse_ipv6

--- "ipv4", "ipv6" or "name" (kong/tools/ip.lua hostname_type).
function ip.hostname_type(host)
  if parse_ipv4(host) then
    return "ipv4"
  end
  local bare = match(host, "^%[(.*)%]$") or host
  if find(bare, ":", 1, true) and parse_ipv6(bare) then
    return "ipv6"
  end
  return "name"
end

local function prefix_equal(a, b, bits)
  local whole = math.floor(bits / 8)
  if sub(a, 1, whole) ~= sub(b, 1, whole) then
    return false
  end
  local rest = bits % 8
  if rest == 0 then
    return true
  end
  local unit = 2 ^ (8 - rest)
  return math.floor(byte(a, whole + 1) / unit) == math.floor(byte(b, whole + 1) / unit)
end

--- A matcher for a list of addresses and CIDRs (resty.ipmatcher's new + match): match(ip) is
-- true when the address is in one of them. Invalid entries are left out, as Kong leaves them.
function ip.new_matcher(list)
  local v4, v6 = {}, {}
  for _, entry in ipairs(list) do
    local addr, bits = match(entry, "^([^/]+)/(%d+)$")
    addr = addr or entry
    bits = tonumber(bits)
    local packed4 = parse_ipv4(addr)
    if packed4 and (not bits or bits <= 32) then
      v4[#v4 + 1] = { packed4, bits or 32 }
    else
      local packed6 = parse_ipv6(addr)
      if packed6 and (not bits or bits <= 128) then
        v6[#v6 + 1] = { packed6, bits or 128 }
      end
    end
  end

  local cache, cached = {}, 0
  return function(address)
    if type(address) ~= "string" then
      return false
    end
    local known = cache[address]
    if known ~= nil then
      return known
    end

    local result = false
    local packed = parse_ipv4(address)
    local ranges = v4
    if not packed then
      packed = parse_ipv6(match(address, "^%[(.*)%]$") or address)
      ranges = v6
    end
    if packed then
      for i = 1, #ranges do
        local range = ranges[i]
        if prefix_equal(packed, range[1], range[2]) then
          result = true
          break
        end
      end
    end

    if cached >= 4096 then
      cache, cached = {}, 0
    end
    cache[address] = result
    cached = cached + 1
    return result
  end
end

function ip.is_valid_ip_or_cidr(entry)
  local addr, bits = match(entry, "^([^/]+)/(%d+)$")
  addr = addr or entry
  bits = tonumber(bits)
  if parse_ipv4(addr) then
    return not bits or bits <= 32
  end
  if parse_ipv6(addr) then
    return not bits or bits <= 128
  end
  return false
end

return ip
