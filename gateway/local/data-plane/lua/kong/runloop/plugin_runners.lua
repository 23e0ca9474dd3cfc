-- A plan's plugins for one phase as straight-line code: one function per plan and phase,
-- generated when the plan is made (once per route and snapshot), with a call site per plugin.
--
-- Why not a loop over the plan's list: it turns one to six times and is entered once a request,
-- which LuaJIT traces worst (a trace that starts at the loop aborts when it leaves it, "leaving
-- loop in root trace"), and its one call site sees every plugin in turn, so a trace through it
-- exits at the first guard another plugin fails. Generated per plan, each call site sees one
-- plugin. (rate-limiting/unrolled.lua does the same for its periods.)
local load = load
local concat = table.concat
local assert = assert
local ipairs = ipairs
local fmt = string.format

local runners = {}

-- The chunk's upvalues: the plugins (P), their handlers (H) and loggers (L), by position; the
-- plan's entries (E); the access runner's collect and done.
local HEAD = "local P, H, L, E, collect, done = ...\n"

--- kong/init.lua setup_plugin_context and reset_plugin_context around the call of plugin `n`
local function call_in_context(n, call)
  return fmt([[
    ctx.KONG_PLUGIN = P[%d]
    ctx.KONG_LOG = L[%d]
    ctx.plugin_id = cfg.__plugin_id
    %s
    ctx.KONG_LOG = nil]], n, n, call)
end

local function compile(name, body, plugins, entries, collect, done)
  local handlers, logs = {}, {}
  for n, plugin in ipairs(plugins) do
    handlers[n] = plugin.handler
    logs[n] = plugin.log
  end
  -- the chunk name shows in tracebacks and in jit.v's output
  local chunk = assert(load(HEAD .. body, "=plugin_runners " .. name))
  return chunk(plugins, handlers, logs, entries, collect, done)
end

--- runner(ctx, cfgs): the `phase` handlers of the plan's entries listed (by index) in `list`, in
-- order, each run when it has a configuration (cfgs[index]).
function runners.phase(phase, entries, list)
  local plugins = {}
  local body = { "return function(ctx, cfgs)", "  local cfg" }
  for n, index in ipairs(list) do
    plugins[n] = entries[index].plugin
    body[#body + 1] = fmt("  cfg = cfgs[%d]\n  if cfg then", index)
    body[#body + 1] = call_in_context(n, fmt("H[%d].%s(H[%d], cfg)", n, phase, n))
    body[#body + 1] = "  end"
  end
  body[#body + 1] = "end"
  return compile(phase, concat(body, "\n"), plugins, entries)
end

--- runner(ctx, cfgs, first): from the plan's entry `first` on, each entry's configuration is
-- collected (`collect(ctx, entry, cfgs, index)`) and, unless a response is delayed, its access
-- handler run; ctx.plugins_access_next is the entry after the one running. Returns `done`.
function runners.access(entries, collect, done)
  local plugins = {}
  local body = { "return function(ctx, cfgs, first)", "  local cfg, access" }
  for n, entry in ipairs(entries) do
    plugins[n] = entry.plugin
    body[#body + 1] = fmt([[
  if first <= %d then
    ctx.plugins_access_next = %d
    cfg = collect(ctx, E[%d], cfgs, %d)
    access = H[%d].access
    if cfg and access and not ctx.delayed_response then]], n, n + 1, n, n, n)
    body[#body + 1] = call_in_context(n, fmt("access(H[%d], cfg)", n))
    body[#body + 1] = "    end\n  end"
  end
  body[#body + 1] = "  return done\nend"
  return compile("access", concat(body, "\n"), plugins, entries, collect, done)
end

return runners
