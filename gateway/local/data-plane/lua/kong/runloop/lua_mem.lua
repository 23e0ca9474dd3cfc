-- Each worker's Lua VM size in the `kong` shared dict (kong/runloop/handler.lua update_lua_mem,
-- kong/globalpatches.lua's pid bookkeeping): `kong:mem:<pid>` holds collectgarbage("count") (KiB),
-- written when the worker starts and then at most every 10 s from the log phase; a restarted
-- worker removes its predecessor's entry. kong.node.get_memory_stats reads them.
local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local WARN = ngx.WARN
local collectgarbage = collectgarbage
local real_time = require("kong.tools.clock").real_time -- the test clock does not stop sampling

local SAMPLE_RATE = 10 -- seconds

local kong_shm = ngx.shared.kong
local key
local last = 0

local lua_mem = {}

--- Samples now when `force` is set or when the last sample is older than 10 s.
function lua_mem.update(force)
  local now = real_time()
  if force or now - last >= SAMPLE_RATE then
    local ok, err = kong_shm:safe_set(key, collectgarbage("count"))
    if not ok then
      log(ERR, "could not record Lua VM allocated memory: ", err)
    end
    last = now
  end
end

function lua_mem.init_worker()
  local pid = ngx.worker.pid()
  local pid_key = "pids:" .. ngx.worker.id()
  local previous = kong_shm:get(pid_key)
  if previous and previous ~= pid then
    kong_shm:delete("kong:mem:" .. previous)
  end
  local ok, err = kong_shm:safe_set(pid_key, pid)
  if not ok then
    log(WARN, "could not store process id in kong shm: ", err)
  end
  key = "kong:mem:" .. pid
  lua_mem.update(true)
end

return lua_mem
