-- A per-worker pool of tables, as OpenResty's lua-tablepool (not packaged by Debian): tables
-- handed back are cleared and reused instead of becoming garbage on every request.
local new_tab = require "table.new"
local clear_tab = require "table.clear"

local MAX_POOL_SIZE = 200

local pools = {}

local tablepool = {}

function tablepool.fetch(name, narr, nrec)
  local pool = pools[name]
  if pool and pool.n > 0 then
    local t = pool[pool.n]
    pool[pool.n] = nil
    pool.n = pool.n - 1
    return t
  end
  return new_tab(narr, nrec)
end

function tablepool.release(name, t)
  local pool = pools[name]
  if not pool then
    pool = { n = 0 }
    pools[name] = pool
  end
  if pool.n >= MAX_POOL_SIZE then
    return
  end
  clear_tab(t)
  pool.n = pool.n + 1
  pool[pool.n] = t
end

return tablepool
