-- resty.redis, as OpenResty's lua-resty-redis names it (bundled with Kong, not packaged by
-- Debian): the subset Kong's plugins use, written from the Redis protocol (RESP2) over ngx_lua's
-- cosockets. Any unknown name is a command method (red:incrby(key, n), red:eval(script, 1, key,
-- ...)), so instance fields are read with rawget. Replies come back as Lua values, a Redis error
-- reply as `false, message`, a transport error as `nil, err` (the connection is then closed).
local tcp = ngx.socket.tcp
local null = ngx.null
local concat = table.concat
local insert = table.insert
local setmetatable = setmetatable
local tostring = tostring
local tonumber = tonumber
local rawget = rawget
local type = type
local select = select
local sub = string.sub
local byte = string.byte
local lower = string.lower

local _M = { _VERSION = "0.1.0" }
local mt = { __index = _M }

local PLUS, MINUS, COLON, DOLLAR, STAR = byte("+"), byte("-"), byte(":"), byte("$"), byte("*")

function _M.new(_)
  local sock, err = tcp()
  if not sock then
    return nil, err
  end
  return setmetatable({ _sock = sock }, mt)
end

function _M:set_timeout(ms)
  return self._sock:settimeout(ms)
end

function _M:set_timeouts(connect_ms, send_ms, read_ms)
  return self._sock:settimeouts(connect_ms, send_ms, read_ms)
end

-- A TLS connection is pooled under its TLS settings as well: one whose certificate was never
-- checked (ssl_verify false) must not serve a configuration that asks for the check, and a
-- pooled connection does no new handshake. The cosocket options, per caller's opts table.
local tls_sock_opts = setmetatable({}, { __mode = "k" })

local function sock_opts_of(host, port, opts)
  if not opts.ssl then
    return opts
  end
  local derived = tls_sock_opts[opts]
  if not derived then
    local pool = opts.pool or (port and host .. ":" .. port or host)
    derived = {
      pool = pool .. (opts.ssl_verify and ";tls-verified;" or ";tls;") .. (opts.server_name or ""),
      pool_size = opts.pool_size,
      backlog = opts.backlog,
    }
    tls_sock_opts[opts] = derived
  end
  return derived
end


--- connect(host, port, opts): opts.pool, opts.pool_size, opts.backlog (the cosocket's own
--- options, read from the same table), and TLS (opts.ssl, opts.ssl_verify, opts.server_name)
--- through the cosocket's sslhandshake. A host "unix:/path" is a unix socket (no port).
function _M:connect(host, port, opts)
  local sock = self._sock
  local ok, err
  if sub(host, 1, 5) == "unix:" then
    if type(port) == "table" then
      opts = port
    end
    if opts then
      ok, err = sock:connect(host, sock_opts_of(host, nil, opts))
    else
      ok, err = sock:connect(host)
    end
  elseif opts then
    ok, err = sock:connect(host, port, sock_opts_of(host, port, opts))
  else
    ok, err = sock:connect(host, port)
  end
  if not ok then
    return nil, err
  end
  if opts and opts.ssl and sock:getreusedtimes() == 0 then
    ok, err = sock:sslhandshake(false, opts.server_name, opts.ssl_verify)
    if not ok then
      return nil, "failed to do ssl handshake: " .. tostring(err)
    end
  end
  return true
end


function _M:get_reused_times()
  return self._sock:getreusedtimes()
end

function _M:set_keepalive(idle_ms, pool_size)
  if rawget(self, "_pipeline") then
    return nil, "pipeline not committed"
  end
  return self._sock:setkeepalive(idle_ms, pool_size)
end

function _M:close()
  return self._sock:close()
end

local function encode(args, n)
  local parts = { "*", n, "\r\n" }
  local i_part = 3
  for i = 1, n do
    local arg = args[i]
    if type(arg) ~= "string" then
      arg = tostring(arg)
    end
    parts[i_part + 1] = "$"
    parts[i_part + 2] = #arg
    parts[i_part + 3] = "\r\n"
    parts[i_part + 4] = arg
    parts[i_part + 5] = "\r\n"
    i_part = i_part + 5
  end
  return concat(parts, "", 1, i_part)
end

local read_reply

read_reply = function(sock)
  local line, err = sock:receive()
  if not line then
    return nil, err
  end
  local kind = byte(line)
  local rest = sub(line, 2)
  if kind == PLUS then
    return rest
  end
  if kind == MINUS then
    return false, rest
  end
  if kind == COLON then
    return tonumber(rest)
  end
  if kind == DOLLAR then
    local size = tonumber(rest)
    if not size or size < 0 then
      return null
    end
    local data
    data, err = sock:receive(size + 2)
    if not data then
      return nil, err
    end
    return sub(data, 1, size)
  end
  if kind == STAR then
    local count = tonumber(rest)
    if not count or count < 0 then
      return null
    end
    local values = {}
    for i = 1, count do
      local value, item_err = read_reply(sock)
      if value == nil then
        return nil, item_err
      end
      -- An error inside a multi-bulk reply is kept as { false, message }, as lua-resty-redis does.
      values[i] = value == false and { false, item_err } or value
    end
    return values
  end
  return nil, "bad reply"
end

local function command(self, ...)
  local args = { ... }
  local request = encode(args, select("#", ...))
  local pipeline = rawget(self, "_pipeline")
  if pipeline then
    insert(pipeline, request)
    return true
  end
  local sock = self._sock
  local bytes, err = sock:send(request)
  if not bytes then
    sock:close()
    return nil, err
  end
  local value, reply_err = read_reply(sock)
  if value == nil then
    sock:close()
    return nil, reply_err
  end
  if value == false then
    return false, reply_err
  end
  return value
end

function _M:init_pipeline()
  self._pipeline = {}
end

function _M:cancel_pipeline()
  self._pipeline = nil
end

--- Sends every queued command in one write; the replies, in order (an error reply as
--- { false, message }).
function _M:commit_pipeline()
  local pipeline = rawget(self, "_pipeline")
  if not pipeline then
    return nil, "no pipeline"
  end
  self._pipeline = nil
  if #pipeline == 0 then
    return {}
  end
  local sock = self._sock
  local bytes, err = sock:send(concat(pipeline))
  if not bytes then
    sock:close()
    return nil, err
  end
  local replies = {}
  for i = 1, #pipeline do
    local value, reply_err = read_reply(sock)
    if value == nil then
      sock:close()
      return nil, reply_err
    end
    replies[i] = value == false and { false, reply_err } or value
  end
  return replies
end

setmetatable(_M, {
  __index = function(_, name)
    local cmd = lower(name)
    local method = function(self, ...)
      return command(self, cmd, ...)
    end
    _M[name] = method
    return method
  end,
})

return _M
