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

ngx = {
  shared = { animal_store_edge = setmetatable({ data = {} }, Dict) },
  now = function() return now end,
  time = function() return math.floor(now) end,
  null = setmetatable({}, { __tostring = function() return "null" end }),
  -- resty.redis's upvalues; the cases keep bans in the dict (policy local), so no socket opens
  socket = { tcp = function() error("the unit stub has no sockets") end },
  timer = { at = function() error("the unit stub has no timers") end },
}

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
    logs = {},
  }
  stub.current = r
  return r
end

local function cur() return stub.current end

kong = {
  ctx = setmetatable({}, { __index = function(_, k) if k == "plugin" then return cur().ctx end end }),
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
}

--- Runs one phase; an exit stops the handler as kong.response.exit does.
function stub.run(handler, phase, conf)
  local ok, err = pcall(handler[phase], handler, conf)
  if not ok and err ~= "__exit__" then error(err, 0) end
end

return stub
