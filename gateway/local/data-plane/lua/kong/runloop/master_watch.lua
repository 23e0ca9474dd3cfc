-- A worker whose nginx master is gone quits instead of serving on.
--
-- nginx's workers do not watch their master. When the master dies without stopping them (killed,
-- a crash), orphaned workers keep answering on the proxy's port, which they share through
-- reuseport with the node started after it, with the configuration they had. Each worker checks
-- its parent once a second; reparented, it asks itself to quit gracefully, as the master would.
local ffi = require "ffi"
local process = require "ngx.process"

local C = ffi.C
local ngx = ngx
local log = ngx.log
local WARN = ngx.WARN
local timer_every = ngx.timer.every
local worker_pid = ngx.worker.pid

ffi.cdef [[
  int getppid(void);
  int kill(int pid, int sig);
]]

local SIGQUIT = 3
local INTERVAL = 1

local master_watch = {}

--- Starts the check in this worker (init_worker); nil, err when its timer cannot be created.
function master_watch.start()
  -- the master as nginx recorded it at fork: a master killed before this worker got here is
  -- already not its parent
  local master = process.get_master_pid() or C.getppid()
  return timer_every(INTERVAL, function(premature)
    if premature then
      return
    end
    if C.getppid() ~= master then
      log(WARN, "the nginx master (pid ", master, ") is gone: this worker quits")
      C.kill(worker_pid(), SIGQUIT)
    end
  end)
end

return master_watch
