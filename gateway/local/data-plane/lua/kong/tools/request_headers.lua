-- The request's headers as ngx.req.get_headers() would return them now (its default 100 at
-- most), built once a request and kept current across the writes plugins make: for the data
-- plane's own readers of the whole table (key-auth, request-size-limiting), which would
-- otherwise each build it again after the edge plugin and key-auth have set and cleared theirs.
--
-- The table is shared: its readers must not change it. It starts as the runloop's own
-- ctx.cached_request_headers (Kong's, which stays as it was read, whatever plugins write after);
-- the first write copies it. ngx.req.set_header and clear_header, wrapped at init, apply a write
-- to the copy when ngx_lua stores it as given (a header name of token characters, a non-empty
-- value without control characters: nothing for ngx_lua to escape or drop); any other write,
-- and every other function that changes request headers, drops the table, and the next reader
-- builds it again. A request of more than 100 headers is never kept: where a write lands in
-- the list decides whether get_headers() would show it.
local ngx = ngx
local req = ngx.req
local type = type
local next = next
local ipairs = ipairs
local find = string.find
local lower = string.lower
local re_find = ngx.re.find
local setmetatable = setmetatable
local getmetatable = getmetatable
local new_tab = require "table.new"
local clear_tab = require "table.clear"
local get_ctx_table = require("resty.core.ctx").get_ctx_table

local get_headers = req.get_headers

local HEADERS = "animal_store_live_request_headers"
-- whether HEADERS is this request's own copy (else it is ctx.cached_request_headers)
local OWNED = "animal_store_live_request_headers_owned"

-- RFC 9110 token characters
local TOKEN = [[^[A-Za-z0-9!#$%&'*+.^_`|~-]+$]]

-- a header name's table key, or false: not a token. Kept for the first names written (plugins'
-- configured names); names from elsewhere do not grow the worker's memory past that.
local MAX_NAMES = 200
-- they set Content-Length
local BODY_WRITERS = { "set_body_data", "set_body_file", "finish_body" }
local key_of, names = {}, 0

local function key_for(name)
  local key = key_of[name]
  if key ~= nil then
    return key
  end
  key = re_find(name, TOKEN, "jo") and lower(name) or false
  if names < MAX_NAMES then
    names = names + 1
    key_of[name] = key
  end
  return key
end

-- whether a value has no control character (tab included), for the values last written: a
-- Lua pattern's scan in C cost more than the write itself, and the values repeat (a consumer's
-- id, username, credential id, its key's digest)
local MAX_VALUES = 1000
local plain_of, values = {}, 0

local function is_plain(value)
  local plain = plain_of[value]
  if plain == nil then
    plain = not find(value, "%c")
    if values >= MAX_VALUES then
      clear_tab(plain_of)
      values = 0
    end
    values = values + 1
    plain_of[value] = plain
  end
  return plain
end

local _M = {}

--- The runloop's freshly read headers (get_headers()' table and error): the live table's start.
function _M.share(ctx, headers, err)
  if err == nil then
    ctx[HEADERS] = headers
    ctx[OWNED] = false
  end
end

--- The request's headers as they stand; read only.
function _M.get(ctx)
  local headers = ctx[HEADERS]
  if headers then
    return headers
  end
  local err
  headers, err = get_headers()
  if err == nil then
    ctx[HEADERS] = headers
    ctx[OWNED] = true
  end
  return headers
end

-- the live table, made this request's own, to write to
local function owned(ctx, headers)
  if ctx[OWNED] then
    return headers
  end
  local copy = new_tab(0, 8)
  for k, v in next, headers do
    copy[k] = v
  end
  setmetatable(copy, getmetatable(headers))
  ctx[HEADERS] = copy
  ctx[OWNED] = true
  return copy
end

local function drop(ctx)
  ctx[HEADERS] = nil
end

-- after a set_header(name, value) ngx_lua took
local function written(name, value)
  local ctx = get_ctx_table()
  local headers = ctx[HEADERS]
  if not headers then
    return
  end
  local key = type(name) == "string" and key_for(name)
  if key and value == nil then
    owned(ctx, headers)[key] = nil
  elseif key and type(value) == "string" and value ~= "" and is_plain(value) then
    owned(ctx, headers)[key] = value
  else
    drop(ctx)
  end
end

local function dropping(original)
  return function(...)
    original(...)
    drop(get_ctx_table())
  end
end

--- Wraps ngx_lua's request header writers, once, in init (before any module keeps them).
function _M.install()
  local set_header = req.set_header
  local clear_header = req.clear_header
  req.set_header = function(name, value)
    set_header(name, value)
    written(name, value)
  end
  req.clear_header = function(name)
    clear_header(name)
    written(name, nil)
  end
  -- add_header appends to whatever is there
  for _, name in ipairs(BODY_WRITERS) do
    if req[name] then
      req[name] = dropping(req[name])
    end
  end
  local ngx_req = require "ngx.req"
  ngx_req.add_header = dropping(ngx_req.add_header)
end

return _M
