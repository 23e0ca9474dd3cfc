-- kong/globalpatches.lua's role here: what the node changes in ngx_lua's Lua API once, in
-- init_by_lua, for every worker.
--
-- ngx.var, ngx.header and ngx.ctx reads that LuaJIT can compile. lua-resty-core 0.1.25 ends both
-- __index functions in `return ffi.string(...)`: a tail call to a fast function, which the trace
-- recorder cannot follow back into the caller ("NYI: return to lower frame"). The functions are
-- blacklisted and every such read of every request runs in the interpreter, its FFI call through
-- the slow generic path. The same C entry points (ngx_http_lua_ffi_var_get,
-- ngx_http_lua_ffi_get_resp_header), with the same results and errors, their string read into a
-- local before it is returned, compile.
local ffi = require "ffi"
local base = require "resty.core.base"
require "resty.core.var"      -- declares ngx_http_lua_ffi_var_get
require "resty.core.response" -- declares ngx_http_lua_ffi_get_resp_header
require "resty.core.time"     -- declares ngx_http_lua_ffi_now, ngx_http_lua_ffi_time

local C = ffi.C
local ffi_str = ffi.string
local ffi_cast = ffi.cast
local type = type
local error = error
local tostring = tostring
local getmetatable = getmetatable
local new_tab = base.new_tab
local get_request = base.get_request
local get_size_ptr = base.get_size_ptr
local get_string_buf = base.get_string_buf

local NGX_OK = 0
local NGX_ERROR = -1
local FFI_BAD_CONTEXT = base.FFI_BAD_CONTEXT

-- what lua-resty-core reads at most of one response header
local MAX_HEADER_VALUES = 100
local STR_PTR = ffi.typeof("ngx_http_lua_ffi_str_t*")
local STR_SIZE = ffi.sizeof("ngx_http_lua_ffi_str_t")

local value_ptr = ffi.new("unsigned char *[1]")
local errmsg = base.get_errmsg_ptr()

local function var_get(_, name)
  local r = get_request()
  if not r then
    error("no request found")
  end

  local value_len = get_size_ptr()
  local rc
  if type(name) == "number" then
    -- a regex capture: $1, $2...
    rc = C.ngx_http_lua_ffi_var_get(r, nil, 0, nil, name, value_ptr, value_len, errmsg)
  else
    if type(name) ~= "string" then
      error("bad variable name", 2)
    end
    local name_len = #name
    rc = C.ngx_http_lua_ffi_var_get(r, name, name_len, get_string_buf(name_len), 0, value_ptr,
                                    value_len, errmsg)
  end

  if rc == NGX_OK then
    local value = ffi_str(value_ptr[0], value_len[0])
    return value
  end
  if rc == NGX_ERROR then
    error(ffi_str(errmsg[0]), 2)
  end
  -- NGX_DECLINED: no such variable, or no value
  return nil
end

local function resp_header_get(_, name)
  local r = get_request()
  if not r then
    error("no request found")
  end

  if type(name) ~= "string" then
    name = tostring(name)
  end
  local name_len = #name
  local name_buf = get_string_buf(name_len + STR_SIZE * MAX_HEADER_VALUES)
  local values = ffi_cast(STR_PTR, name_buf + name_len)
  local n = C.ngx_http_lua_ffi_get_resp_header(r, name, name_len, name_buf, values, MAX_HEADER_VALUES,
                                               errmsg)
  if n == FFI_BAD_CONTEXT then
    error("API disabled in the current context", 2)
  end
  if n == 0 then
    return nil
  end
  if n == 1 then
    local value = ffi_str(values[0].data, values[0].len)
    return value
  end
  if n > 0 then
    local list = new_tab(n, 0)
    for i = 1, n do
      local v = values[i - 1]
      list[i] = ffi_str(v.data, v.len)
    end
    return list
  end
  error(ffi_str(errmsg[0]), 2)
end

-- ngx.ctx is one of lua-resty-core's "magic keys" of the ngx table: its __index looks the key up
-- in a table of getters and tail-calls the one found. Read from the plugins' loops, that lookup
-- aborts traces ("loop unroll limit reached"); ngx.ctx, the most read of them, is answered first,
-- by the same getter, and every other key goes the way it went.
local get_ctx_table = require("resty.core.ctx").get_ctx_table

-- ngx.now and ngx.time: lua-resty-core's end in `return tonumber(...)`, the same tail call to a
-- fast function ("leaving loop in root trace at tonumber" in jit.v): they never compile as traces
-- of their own, and each call from interpreted code takes the FFI's slow path. Same C functions,
-- the value read into a local first. (kong.tools.clock keeps these as the real clock; the test
-- clock, when installed, replaces ngx.now and ngx.time after them.)
local ffi_now = C.ngx_http_lua_ffi_now
local ffi_time = C.ngx_http_lua_ffi_time
local tonumber = tonumber

local function now()
  local seconds = tonumber(ffi_now())
  return seconds
end

local function time()
  local seconds = tonumber(ffi_time())
  return seconds
end

local globalpatches = {}

function globalpatches.install()
  getmetatable(ngx.var).__index = var_get
  getmetatable(ngx.header).__index = resp_header_get
  ngx.now = now
  ngx.time = time
  require("kong.tools.request_headers").install()

  local ngx_mt = getmetatable(ngx)
  local magic_get = ngx_mt.__index
  ngx_mt.__index = function(t, key)
    if key == "ctx" then
      local ctx = get_ctx_table()
      return ctx
    end
    return magic_get(t, key)
  end
end

return globalpatches
