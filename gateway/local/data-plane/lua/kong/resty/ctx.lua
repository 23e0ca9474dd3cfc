-- Keeps ngx.ctx across an internal redirect (ngx.exec to the @unbuffered locations), as
-- kong/resty/ctx.lua does: ngx_lua forgets the request's ctx table on a redirect, but the table
-- stays referenced in the registry until the request ends; its reference travels in $ctx_ref.
local ffi = require "ffi"
local base = require "resty.core.base"
require "resty.core.ctx" -- declares ngx_http_lua_ffi_get_ctx_ref

local C = ffi.C
local var = ngx.var
local log = ngx.log
local WARN = ngx.WARN
local tonumber = tonumber
local registry = debug.getregistry()
local get_request = base.get_request
local FFI_NO_REQ_CTX = base.FFI_NO_REQ_CTX

local in_ssl_phase = ffi.new("int[1]")
local ssl_ctx_ref = ffi.new("int[1]")

local ctx = {}

function ctx.stash_ref()
  local r = get_request()
  if not r then
    return
  end
  local _ = ngx.ctx -- the table must exist to have a reference
  local ref = C.ngx_http_lua_ffi_get_ctx_ref(r, in_ssl_phase, ssl_ctx_ref)
  if ref == FFI_NO_REQ_CTX then
    log(WARN, "could not stash ngx.ctx ref: no ctx found")
    return
  end
  var.ctx_ref = ref
end

function ctx.apply_ref()
  local ref = tonumber(var.ctx_ref)
  if not ref then
    return
  end
  local original = registry.ngx_lua_ctx_tables[ref]
  if not original then
    log(WARN, "could not apply ngx.ctx: no ctx found")
    return
  end
  ngx.ctx = original
  var.ctx_ref = ""
end

return ctx
