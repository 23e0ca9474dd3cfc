-- A small stand-in for the Kong 3.9 PDK, enough to drive a plugin's phases from a unit test
-- under the luajit command (OpenResty's LuaJIT, what Kong and the local data plane run).
local stub = {}

local now = 1893499200 -- 2030-01-02T00:00:00Z
function stub.set_time(t) now = t end
function stub.advance(seconds) now = now + seconds end

-- ngx.shared: expiry follows the stub's clock
local Dict = {}
Dict.__index = Dict
local function alive(self, key)
  local e = self.data[key]
  if e and e.exp and e.exp <= now then self.data[key] = nil return nil end
  return e
end
function Dict:get(key) local e = alive(self, key) return e and e.value end
function Dict:set(key, value, ttl) self.data[key] = { value = value, exp = (ttl and ttl > 0) and now + ttl or nil } return true end
function Dict:delete(key) self.data[key] = nil end
function Dict:incr(key, by, init, init_ttl)
  local e = alive(self, key)
  if not e then
    if init == nil then return nil, "not found" end
    self:set(key, init + by, init_ttl)
    return init + by
  end
  e.value = e.value + by
  return e.value
end

function Dict:add(key, value, ttl)
  if alive(self, key) then return false, "exists" end
  return self:set(key, value, ttl)
end

-- ngx.crc32_long: zlib's crc32 is the same CRC-32 (IEEE 802.3) as nginx's ngx_crc32_long.
local ffi = require "ffi"
ffi.cdef [[ unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int len); ]]
local zlib = ffi.load("libz.so.1")

ngx = {
  shared = { animal_store_edge = setmetatable({ data = {} }, Dict) },
  now = function() return now end,
  time = function() return math.floor(now) end,
  null = setmetatable({}, { __tostring = function() return "null" end }),
  -- resty.redis's upvalues; the cases keep bans in the dict (policy local), so no socket opens
  socket = { tcp = function() error("the unit stub has no sockets") end },
  timer = { at = function() error("the unit stub has no timers") end },
  crc32_long = function(s) return tonumber(zlib.crc32(0, s, #s)) end,
}

-- ngx.base64 (lua-resty-core): base64url without padding, written out here.
local BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
package.preload["ngx.base64"] = function()
  local function encode_base64url(s)
    local out = {}
    for i = 1, #s, 3 do
      local a, b, c = s:byte(i, i + 2)
      local n = a * 65536 + (b or 0) * 256 + (c or 0)
      local chars = (b == nil) and 2 or (c == nil) and 3 or 4
      for j = 1, chars do
        local index = math.floor(n / 2 ^ (18 - 6 * (j - 1))) % 64
        out[#out + 1] = BASE64URL:sub(index + 1, index + 1)
      end
    end
    return table.concat(out)
  end
  return { encode_base64url = encode_base64url }
end

-- resty.sha256 is the data plane's own (gateway/local/data-plane/lua/resty/, libcrypto over the
-- FFI, as on nginx): counted, so that a case can say no token was hashed.
stub.hashes = 0
do
  local sha256 = require "resty.sha256"
  local update = sha256.update
  sha256.update = function(self, ...)
    stub.hashes = stub.hashes + 1
    return update(self, ...)
  end
end

-- kong.db.keyauth_credentials and kong.cache: credentials by key, look-ups counted.
stub.credentials = {}
stub.lookups = 0
stub.lookup_error = nil

local function lower_keys(t)
  local out = {}
  for k, v in pairs(t or {}) do out[string.lower(k)] = v end
  return out
end

--- Starts a request: request headers, and what later phases will see.
function stub.request(headers)
  local r = {
    request_headers = lower_keys(headers),
    upstream_headers = lower_keys(headers),
    response_headers = {},
    status = 200,
    source = "service",
    credential = nil,
    consumer = nil,
    ctx = {},
    shared = {},
    logs = {},
  }
  stub.current = r
  return r
end

local function cur() return stub.current end

kong = {
  ctx = setmetatable({}, { __index = function(_, k)
    if k == "plugin" then return cur().ctx end
    if k == "shared" then return cur().shared end
  end }),
  request = {
    get_header = function(name)
      local v = cur().upstream_headers[string.lower(name)]
      if type(v) == "table" then return v[1] end
      return v
    end,
  },
  service = { request = {
    set_header = function(name, value) cur().upstream_headers[string.lower(name)] = tostring(value) end,
    clear_header = function(name) cur().upstream_headers[string.lower(name)] = nil end,
  } },
  response = {
    get_status = function() return cur().status end,
    get_source = function() return cur().source end,
    get_header = function(name) return cur().response_headers[string.lower(name)] end,
    set_header = function(name, value) cur().response_headers[string.lower(name)] = tostring(value) end,
    clear_header = function(name) cur().response_headers[string.lower(name)] = nil end,
    exit = function(status, body, headers)
      local r = cur()
      r.exited = { status = status, body = body }
      r.status = status
      r.source = "exit"
      for k, v in pairs(headers or {}) do r.response_headers[string.lower(k)] = tostring(v) end
      error("__exit__", 0)
    end,
    get_raw_body = function() return cur().body or "" end,
    set_raw_body = function(body) cur().body = body end,
  },
  client = {
    get_credential = function() return cur().credential end,
    get_consumer = function() return cur().consumer end,
  },
  log = {
    err = function(...) table.insert(cur().logs, table.concat({ ... })) end,
    notice = function(...) table.insert(cur().logs, table.concat({ ... })) end,
    warn = function(...) table.insert(cur().logs, table.concat({ ... })) end,
    debug = function() end,
  },
  db = {
    keyauth_credentials = {
      select_by_key = function(_, key)
        stub.lookups = stub.lookups + 1
        if stub.lookup_error then return nil, stub.lookup_error end
        return stub.credentials[key]
      end,
      cache_key = function(_, key) return "keyauth_credentials:" .. key .. ":::::" end,
    },
  },
  cache = {
    get = function(_, key, _, callback, ...)
      assert(type(key) == "string", "key must be a string")
      local value, err = callback(...)
      if err then return nil, err end
      return value, nil, 3
    end,
  },
}

--- Runs one phase; an exit stops the handler as kong.response.exit does.
function stub.run(handler, phase, conf)
  local ok, err = pcall(handler[phase], handler, conf)
  if not ok and err ~= "__exit__" then error(err, 0) end
end

return stub
