-- Worker 0's long poll of the control plane's cluster listener (README "The snapshot and its
-- delivery"): GET /v1/snapshot?node_id&hostname&node_version&hash&wait[&failed_hash&error]
-- over a cosocket, HTTP/1.1 with a Content-Length body; 200 brings a snapshot, 304 nothing new.
-- A snapshot that cannot be run keeps the previous one and is reported on the next poll. While
-- the control plane cannot be reached the poll is retried with a growing delay.
local clustering = require "kong.clustering"
local dns = require "kong.runloop.dns"
local hostname_type = require("kong.tools.ip").hostname_type
local real_now = require("kong.tools.clock").real_now

local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local WARN = ngx.WARN
local NOTICE = ngx.NOTICE
local sleep = ngx.sleep
local escape_uri = ngx.escape_uri
local md5 = ngx.md5
local tcp = ngx.socket.tcp
local tonumber = tonumber
local lower = string.lower
local match = string.match
local sub = string.sub
local concat = table.concat

local WAIT_SECONDS = 30
local MIN_BACKOFF, MAX_BACKOFF = 0.5, 10
local MAX_BODY = 256 * 1024 * 1024
local MAX_ERROR_LENGTH = 1000

local poller = {}

--- "unix:/path" or "host:port" → what tcp:connect takes.
local function endpoint(address)
  if sub(address, 1, 5) == "unix:" then
    return address
  end
  local host, port = match(address, "^%[?([^%]]+)%]?:(%d+)$")
  if not host then
    return nil, "cluster_control_plane must be unix:<path> or host:port, got " .. address
  end
  if hostname_type(host) == "name" then
    local ip, err = dns.toip(host)
    if not ip then
      return nil, "could not resolve " .. host .. ": " .. tostring(err)
    end
    host = ip
  end
  return host, tonumber(port)
end

local function body_hash(body)
  local hashed = match(body, '"config_hash"%s*:%s*"(%x+)"')
  if hashed then
    return hashed
  end
  return md5(body)
end

-- The control plane holds a poll up to `wait` seconds: the status line is awaited in short
-- reads, so that a worker shutting down (nginx -s quit) does not wait for the answer.
local WAIT_STEP_MS = 500

local function receive_status_line(sock, timeout_ms)
  local deadline = real_now() + timeout_ms / 1000
  local buffer = ""
  sock:settimeout(WAIT_STEP_MS)
  while true do
    local line, err, partial = sock:receive("*l")
    if line then
      sock:settimeout(5000)
      return buffer .. line
    end
    if err ~= "timeout" then
      return nil, err
    end
    buffer = buffer .. (partial or "")
    if ngx.worker.exiting() then
      return nil, "the worker is exiting"
    end
    ngx.update_time()
    if real_now() > deadline then
      return nil, "timeout"
    end
  end
end

--- One request/response. Returns status, body or nil, error.
local function request(address, path, timeout_ms)
  local host, port = endpoint(address)
  if not host then
    return nil, port
  end

  local sock = tcp()
  sock:settimeouts(5000, 5000, 5000)
  local ok, err
  if port then
    ok, err = sock:connect(host, port)
  else
    ok, err = sock:connect(host)
  end
  if not ok then
    return nil, "could not connect to the control plane at " .. address .. ": " .. tostring(err)
  end

  ok, err = sock:send(concat({
    "GET ", path, " HTTP/1.1\r\n",
    "Host: kong-control-plane\r\n",
    "Accept: application/json\r\n",
    "Connection: close\r\n",
    "\r\n",
  }))
  if not ok then
    sock:close()
    return nil, "could not send the poll: " .. tostring(err)
  end

  local status_line
  status_line, err = receive_status_line(sock, timeout_ms)
  if not status_line then
    sock:close()
    return nil, "no answer from the control plane: " .. tostring(err)
  end
  local status = tonumber(match(status_line, "^HTTP/1%.[01] (%d%d%d)"))
  if not status then
    sock:close()
    return nil, "not an HTTP status line from the control plane: " .. sub(status_line, 1, 100)
  end

  local length, chunked
  while true do
    local line
    line, err = sock:receive("*l")
    if not line then
      sock:close()
      return nil, "control plane headers cut short: " .. tostring(err)
    end
    if line == "" then
      break
    end
    local name, value = match(line, "^([^:]+):%s*(.-)%s*$")
    if name then
      name = lower(name)
      if name == "content-length" then
        length = tonumber(value)
      elseif name == "transfer-encoding" and lower(value) ~= "identity" then
        chunked = true
      end
    end
  end

  local body = ""
  if chunked then
    sock:close()
    return nil, "the control plane sent a chunked body (the protocol wants Content-Length)"
  end
  if length and length > MAX_BODY then
    sock:close()
    return nil, "snapshot of " .. length .. " bytes is larger than " .. MAX_BODY
  end
  if length and length > 0 then
    body, err = sock:receive(length)
    if not body then
      sock:close()
      return nil, "snapshot body cut short: " .. tostring(err)
    end
  end
  sock:close()
  return status, body
end

local function poll_path(conf, state)
  local parts = {
    "/v1/snapshot?node_id=", escape_uri(conf.node_id),
    "&hostname=", escape_uri(kong.node.get_hostname()),
    "&node_version=", escape_uri(kong.version),
    "&hash=", escape_uri(clustering.current_hash()),
    "&wait=", WAIT_SECONDS,
  }
  if state.failed_hash then
    parts[#parts + 1] = "&failed_hash=" .. escape_uri(state.failed_hash)
    parts[#parts + 1] = "&error=" .. escape_uri(sub(state.error, 1, MAX_ERROR_LENGTH))
  end
  return concat(parts)
end

--- Takes a snapshot the control plane sent. Returns true, or nil and why it was not taken.
local function take(json)
  local rt, err = clustering.build(json)
  if not rt then
    return nil, err
  end
  local ok
  ok, err = clustering.publish(json, rt, true)
  if not ok then
    return nil, err
  end
  clustering.install(rt)
  log(NOTICE, "configuration ", rt.hash, " (version ", rt.version, ") received from the control plane")
  return true
end

local function run(premature, conf)
  if premature then
    return
  end

  local state = {}
  local backoff = MIN_BACKOFF
  local unreachable_logged = false

  while not ngx.worker.exiting() do
    local status, body = request(conf.cluster_control_plane, poll_path(conf, state), (WAIT_SECONDS + 10) * 1000)
    if status == 200 then
      backoff = MIN_BACKOFF
      unreachable_logged = false
      local ok, err = take(body)
      if ok then
        state.failed_hash, state.error = nil, nil
      else
        state.failed_hash = body_hash(body)
        state.error = err
        log(ERR, "configuration ", state.failed_hash, " from the control plane was not applied ",
                 "(the previous one stays): ", err)
      end

    elseif status == 304 then
      backoff = MIN_BACKOFF
      unreachable_logged = false
      state.failed_hash, state.error = nil, nil

    else
      local why = status and ("status " .. status .. " from the control plane: " .. sub(body or "", 1, 200)) or body
      if not unreachable_logged then
        log(WARN, "cannot poll the control plane (retrying): ", why)
        unreachable_logged = true
      end
      local wake = real_now() + backoff
      while real_now() < wake and not ngx.worker.exiting() do
        sleep(0.1)
        ngx.update_time()
      end
      backoff = backoff * 2
      if backoff > MAX_BACKOFF then
        backoff = MAX_BACKOFF
      end
    end
  end
end

--- Starts the poll (worker 0's init_worker).
function poller.start(conf)
  local ok, err = ngx.timer.at(0, run, conf)
  if not ok then
    log(ERR, "could not start polling the control plane: ", err)
  end
end

poller._request = request

return poller
