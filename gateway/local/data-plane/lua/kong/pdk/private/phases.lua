-- kong/pdk/private/phases.lua (3.9.3): Kong's phases as bit flags in ngx.ctx.KONG_PHASE, and the
-- checks PDK functions make against them.
local bit = require "bit"

local band = bit.band
local bor = bit.bor
local lshift = bit.lshift
local format = string.format
local concat = table.concat
local get_phase = ngx.get_phase

local PHASES = {
  init_worker = 0x00000001,
  certificate = 0x00000002,
  client_hello = 0x00000008,
  rewrite = 0x00000010,
  access = 0x00000020,
  balancer = 0x00000040,
  response = 0x00000080,
  cluster_listener = 0x00000100,
  header_filter = 0x00000200,
  body_filter = 0x00000400,
  log = 0x00002000,
  preread = 0x00004000,
  error = 0x01000000,
  admin_api = 0x10000000,
}

local NAMES = {}
for name, value in pairs(PHASES) do
  NAMES[value] = name
end

local function names_of(phases)
  local names = {}
  local flag = 1
  for _ = 1, 30 do
    if band(phases, flag) ~= 0 and NAMES[flag] then
      names[#names + 1] = NAMES[flag]
    end
    flag = lshift(flag, 1)
  end
  return names
end

local function check(accepted)
  local current = ngx.ctx.KONG_PHASE
  if not current then
    if get_phase() == "content" then
      current = PHASES.admin_api
    else
      error(format("no phase in ngx.ctx.KONG_PHASE, (need one of %s)", concat(names_of(accepted), ", ")), 3)
    end
  end

  if band(current, accepted) ~= 0 then
    return
  end

  error(format("function cannot be called in %s phase (only in: %s)",
               NAMES[current] or "'unknown phase'", concat(names_of(accepted), ", ")), 3)
end

local function check_not(rejected)
  local current = ngx.ctx.KONG_PHASE
  if not current then
    error("no phase in ngx.ctx.KONG_PHASE")
  end

  if band(current, rejected) == 0 then
    return
  end

  error(format("function cannot be called in %s phase (can be called in any phases except: %s)",
               NAMES[current] or "'unknown phase'", concat(names_of(rejected), ", ")))
end

local public = {}
for name, value in pairs(PHASES) do
  public[name] = value
  public[value] = name
end
public.request = bor(PHASES.rewrite, PHASES.access, PHASES.balancer, PHASES.response, PHASES.header_filter,
                     PHASES.body_filter, PHASES.log, PHASES.error, PHASES.admin_api, PHASES.cluster_listener)

return {
  new = bor,
  check = check,
  check_not = check_not,
  phases = setmetatable(public, { __index = function(_, k)
    error("unknown phase or phase alias: " .. tostring(k))
  end }),
}
