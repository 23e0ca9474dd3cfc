-- The request's id, Kong's $kong_request_id (lua-kong-nginx-module): 32 random hex digits,
-- made once per request on first use and kept in ngx.ctx.request_id, where Kong's
-- kong/observability/tracing/request_id.lua looks first. nginx's own $request_id would cost an
-- OpenSSL RAND_bytes and a getpid() system call on every request; the worker's PRNG (seeded per
-- worker in init_worker) is what lua-kong-nginx-module's ngx_random() amounts to. One
-- string.format makes the one string (bit.tohex would make four more and three concatenations).
local random = math.random
local fmt = string.format

local request_id = {}

local WORD = 0xffffffff

function request_id.new()
  return fmt("%08x%08x%08x%08x", random(0, WORD), random(0, WORD), random(0, WORD), random(0, WORD))
end

--- The id of the request whose ngx.ctx is `ctx`.
function request_id.get(ctx)
  local rid = ctx.request_id
  if not rid then
    rid = request_id.new()
    ctx.request_id = rid
  end
  return rid
end

return request_id
