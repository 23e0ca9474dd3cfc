-- Kong's phases (kong/init.lua, 3.9.3) for a data-plane node of the local gateway: nginx.conf
-- calls Kong.<phase>() from each *_by_lua directive. The node's configuration comes from a
-- snapshot (kong.clustering) instead of Kong's database or declarative cache; the request path
-- is Kong's: ngx.ctx fields, plugin iteration, delayed exits, error pages, latencies.
assert(package.loaded["resty.core"], "lua-resty-core must be loaded")

-- As Kong at require time: the shared dicts are checked, the global patches installed, and the
-- `kong` global exists; Kong.init makes it the PDK once it has read the node's settings.
for _, dict in ipairs({ "kong", "kong_locks", "kong_rate_limiting_counters", "kong_snapshot" }) do
  if not ngx.shared[dict] then
    error("missing shared dict '" .. dict .. "' in the nginx configuration")
  end
end

require("kong.globalpatches").install()

local meta = require "kong.meta"

_G.kong = {
  version = meta._VERSION,
  version_num = 30903,
}

local PDK = require "kong.pdk"
local DB = require "kong.db"
local cache = require "kong.cache"
local conf_loader = require "kong.conf"
local test_clock = require "kong.test_clock"
local real_now = require("kong.tools.clock").real_now
local constants = require "kong.constants"
local phase_checker = require "kong.pdk.private.phases"
local runloop = require "kong.runloop.handler"
local plugins_iterator = require "kong.runloop.plugins_iterator"
local plugins_loader = require "kong.runloop.plugins_loader"
local plugin_runners = require "kong.runloop.plugin_runners"
local dns = require "kong.runloop.dns"
local certificate = require "kong.runloop.certificate"
local clustering = require "kong.clustering"
local lua_mem = require "kong.runloop.lua_mem"
local master_watch = require "kong.runloop.master_watch"
local poller = require "kong.clustering.poller"
local error_handlers = require "kong.error_handlers"
local status = require "kong.status"
local resty_ctx = require "kong.resty.ctx"
local ngx_balancer = require "ngx.balancer"
local tablepool = require "kong.tools.tablepool"
local request_id = require("kong.tools.request_id").get
local get_ctx_table = require("resty.core.ctx").get_ctx_table

local kong = kong
local ngx = ngx
local var = ngx.var
local arg = ngx.arg
local log = ngx.log
local ERR = ngx.ERR
local CRIT = ngx.CRIT
local NOTICE = ngx.NOTICE
local pcall = pcall
local tostring = tostring
local co_create = coroutine.create
local co_resume = coroutine.resume
local update_time = ngx.update_time
local start_time = ngx.req.start_time
local worker_id = ngx.worker.id
local get_last_failure = ngx_balancer.get_last_failure
local set_current_peer = ngx_balancer.set_current_peer
local set_timeouts = ngx_balancer.set_timeouts
local set_more_tries = ngx_balancer.set_more_tries
local config_for = plugins_iterator.config_for

local PHASES = phase_checker.phases
local PHASE_REWRITE = PHASES.rewrite
local PHASE_ACCESS = PHASES.access
local PHASE_BALANCER = PHASES.balancer
local PHASE_HEADER_FILTER = PHASES.header_filter
local PHASE_BODY_FILTER = PHASES.body_filter
local PHASE_LOG = PHASES.log
local PHASE_ERROR = PHASES.error

local EMPTY = {}

-- ngx.ctx comes from a pool, sized for Kong's ~40 fields (kong/init.lua CTX_NREC), so that a
-- request does not grow (rehash) a fresh table as the phases fill it; back in the log phase
local CTX_NS = "ctx"
local CTX_NREC = 64

-- latencies run on the real clock, whatever the test clock says
local function get_now_ms()
  return real_now() * 1000
end

local function get_updated_now_ms()
  update_time()
  return real_now() * 1000
end

local function get_start_time_ms()
  return start_time() * 1000
end

-- set by Kong.init: the node's prefix (with a trailing slash) and settings
local prefix
local config
local loaded_plugins = EMPTY

-- without trusted_ips no client's X-Forwarded-* headers are passed on: the router need not read
-- the client's address to ask kong.ip.is_trusted (set by Kong.init)
local trusts_anyone = false

-- kong/init.lua setup_plugin_context / reset_plugin_context: kong.log and kong.ctx.plugin
-- follow the running plugin
local function setup_plugin_context(ctx, plugin, cfg)
  ctx.KONG_PLUGIN = plugin
  ctx.KONG_LOG = plugin.log
  ctx.plugin_id = cfg.__plugin_id
end

local function reset_plugin_context(ctx)
  ctx.KONG_LOG = nil
end

--- The plugins' `configure` handlers with every configuration of theirs the runtime has.
local function configure_plugins(rt)
  local ctx = ngx.ctx
  for _, plugin in ipairs(loaded_plugins) do
    local configure = plugin.handler.configure
    if configure then
      local configs
      local c = rt.plugins.combos[plugin.name]
      if c then
        configs = {}
        local function add(cfg)
          if cfg then
            configs[#configs + 1] = cfg
          end
        end
        add(c.global)
        for _, cfg in pairs(c.route) do add(cfg) end
        for _, cfg in pairs(c.service) do add(cfg) end
        for _, by_service in pairs(c.route_service) do
          for _, cfg in pairs(by_service) do add(cfg) end
        end
        for _, scopes in pairs(c.consumer or EMPTY) do
          add(scopes.global)
          for _, cfg in pairs(scopes.route) do add(cfg) end
          for _, cfg in pairs(scopes.service) do add(cfg) end
          for _, by_service in pairs(scopes.route_service) do
            for _, cfg in pairs(by_service) do add(cfg) end
          end
        end
      end
      ctx.KONG_LOG = plugin.log
      local ok, err = pcall(configure, plugin.handler, configs)
      ctx.KONG_LOG = nil
      if not ok then
        log(ERR, "failed to execute plugin '", plugin.name, ":configure (", err, ")")
      end
    end
  end
end

-- The runtime whose configs the plugins' configure handlers were last given: worker 0's poller
-- installs what it receives itself, so a change is noticed here, not only in refresh().
local configured_rt

local function configure_if_changed()
  local rt = clustering.current()
  if rt ~= configured_rt then
    configured_rt = rt
    configure_plugins(rt)
  end
end

--- Runs a runtime this worker built (and the plugins' configure with it).
local function install(rt)
  clustering.install(rt)
  configure_if_changed()
end

local function refresh()
  clustering.refresh()
  configure_if_changed()
end

--- Global instances' handlers for a phase (no route collected).
local function execute_global_plugins(phase, ctx)
  local rt = clustering.current()
  local list = rt.plugins:global_list(phase)
  for i = 1, #list, 2 do
    local plugin, cfg = list[i], list[i + 1]
    setup_plugin_context(ctx, plugin, cfg)
    plugin.handler[phase](plugin.handler, cfg)
    reset_plugin_context(ctx)
  end
end

--- The collected plugins' handlers for a downstream phase (header_filter, body_filter, log):
-- the plan's own straight-line runner for the phase (kong.runloop.plugin_runners).
local function execute_collected_plugins(phase, ctx)
  local plan = ctx.plugins
  if not plan then
    return execute_global_plugins(phase, ctx)
  end
  plan.runners[phase](ctx, ctx.plugins_cfgs or plan.base_cfgs)
end

--- Whether a plugin of the request (its plan, or the global instances without a route) has a
-- handler for a downstream phase: the phase timings Kong records in body_filter and log are read
-- by log handlers only (kong.log.serialize, prometheus), so without one they need not be taken.
local function has_handlers(phase, ctx)
  local plan = ctx.plugins
  if plan then
    return plan.phases[phase][1] ~= nil
  end
  return clustering.current().plugins:global_list(phase)[1] ~= nil
end

--- kong/init.lua execute_collecting_plugins_iterator: in order, each plugin's configuration for
-- this route (and the consumer authenticated so far) is collected; access handlers run in a
-- coroutine so that kong.response.exit can stop one without stopping the others' collection;
-- after an exit the rest are collected but not run. A failing handler is a 500.
--
-- Kong creates a coroutine per handler; here one coroutine runs the handlers in turn, and only
-- a handler that does not return (it yielded: kong.response.exit, or it failed) costs another:
-- the collection goes on from the next plugin (ctx.plugins_access_next) outside it, or, after a
-- plain yield, in a new one. Each handler still runs in a coroutine and is abandoned where it
-- yields, as in Kong.
local ACCESS_DONE = {}

local function collect(ctx, entry, cfgs, i)
  local cfg = config_for(entry, ctx.authenticated_consumer)
  if cfgs then
    cfgs[i] = cfg
  end
  -- a plugin with a response handler needs the upstream's whole response first
  if cfg and entry.plugin.handler.response and not ctx.buffered_proxying then
    ctx.buffered_proxying = true
  end
  return cfg
end

-- the plan's access runner (kong.runloop.plugin_runners): collect and the handlers, from an entry on
local function access_runner(plan)
  local run = plan.access_runner
  if not run then
    run = plugin_runners.access(plan.entries, collect, ACCESS_DONE)
    plan.access_runner = run
  end
  return run
end

-- One run of the access runner from entry `i` in a new coroutine; returns whether it ran to the
-- end (ACCESS_DONE) and, when it did not, the entry to go on from.
local function run_access_from(ctx, run, cfgs, i)
  local co = co_create(run)
  local ok, res = co_resume(co, ctx, cfgs, i)
  if ok and res == ACCESS_DONE then
    return true
  end
  if not ok then
    kong.log.err(res)
    ctx.delayed_response = {
      status_code = 500,
      content = { message = "An unexpected error occurred" },
    }
    ctx.KONG_UNEXPECTED = true
  end
  reset_plugin_context(ctx)
  return false, ctx.plugins_access_next
end

-- After a handler that did not return (an exit, an error, a plain yield): the rest of the entries,
-- collected only once a response is delayed, else run from the next one in a new coroutine.
local function finish_collecting(ctx, plan, cfgs, run, i)
  local entries = plan.entries
  local n = plan.n
  while i <= n do
    if ctx.delayed_response then
      collect(ctx, entries[i], cfgs, i)
      i = i + 1
    else
      local done, next_i = run_access_from(ctx, run, cfgs, i)
      if done then
        return
      end
      i = next_i
    end
  end
end

local function execute_collecting_plugins(ctx, rt)
  local plan = rt.plugins:plan(ctx.route, ctx.service)
  ctx.plugins = plan
  local n = plan.n
  if n == 0 then
    return
  end

  local cfgs
  if plan.consumer_sensitive then
    cfgs = plugins_iterator.fetch_cfgs(n)
    ctx.plugins_cfgs = cfgs
  end

  ctx.delay_response = true
  local run = access_runner(plan)
  -- most requests: every handler returns, in one coroutine; the loop (which would end any
  -- trace through Kong.access, "inner loop in root trace") only after one that did not
  if ctx.delayed_response then
    finish_collecting(ctx, plan, cfgs, run, 1)
  else
    local done, next_i = run_access_from(ctx, run, cfgs, 1)
    if not done then
      finish_collecting(ctx, plan, cfgs, run, next_i)
    end
  end
  ctx.plugins_access_next = nil
  ctx.delay_response = nil
end

local function flush_delayed_response(ctx)
  ctx.delay_response = nil
  ctx.buffered_proxying = nil
  local callback = ctx.delayed_response_callback
  if callback then
    callback(ctx)
    return
  end
  local dr = ctx.delayed_response
  local message = dr.content and dr.content.message or dr.content
  kong.response.error(dr.status_code, message, dr.headers)
end

local Kong = {}

function Kong.init()
  prefix = ngx.config.prefix()
  if prefix:sub(-1) ~= "/" then
    prefix = prefix .. "/"
  end
  config = conf_loader.load(prefix)

  -- before any plugin loads: the test clock patches ngx.now/ngx.time
  if config.test_clock then
    test_clock.install()
  end

  -- what Kong.init sets besides the PDK: plugins may read credentials through them
  kong.db = DB.new()
  kong.cache = cache.new()
  PDK.new(config, kong)

  trusts_anyone = #(config.trusted_ips or EMPTY) > 0

  dns.init(real_now)
  loaded_plugins = plugins_loader.load_all(config.plugins)
  status.init(loaded_plugins)
  clustering.configure(prefix, loaded_plugins)

  ngx.shared.kong:set(constants.NODE_ID_KEY, config.node_id)
  -- the shared dicts outlive a reload; Kong's reset_kong_shm (kong/init.lua:239-258) does not
  -- keep the drain flag, so a reloaded node is ready again
  ngx.shared.kong:delete(constants.KONG_STATUS_READY_KEY)

  -- a restarted node serves its last snapshot before the control plane answers
  local json = clustering.read_file()
  if json then
    local rt, err = clustering.build(json)
    if rt then
      local ok, publish_err = clustering.publish(json, rt, false)
      if not ok then
        error(publish_err)
      end
      log(NOTICE, "loaded configuration ", rt.hash, " (version ", rt.version, ") from ", prefix, "snapshot.json")
    else
      log(ERR, "ignoring ", prefix, "snapshot.json: ", err)
    end
  end
end

function Kong.init_worker()
  local ctx = ngx.ctx
  ctx.KONG_PHASE = PHASES.init_worker
  math.randomseed(ngx.worker.pid() * ngx.now())

  lua_mem.init_worker()
  local watching, watch_err = master_watch.start()
  if not watching then
    log(CRIT, "could not start watching the nginx master: ", watch_err)
  end
  clustering.start_worker()
  install(clustering.empty_runtime())
  refresh()

  if worker_id() == 0 and config.cluster_control_plane then
    poller.start(config)
  end

  local ok, err = ngx.timer.every(1, function(premature)
    if not premature then
      local pok, perr = pcall(refresh)
      if not pok then
        log(ERR, "could not refresh the configuration: ", perr)
      end
    end
  end)
  if not ok then
    log(CRIT, "could not start the configuration refresh timer: ", err)
  end

  for _, plugin in ipairs(loaded_plugins) do
    local init_worker = plugin.handler.init_worker
    if init_worker then
      ctx.KONG_LOG = plugin.log
      local pok, perr = pcall(init_worker, plugin.handler)
      ctx.KONG_LOG = nil
      if not pok then
        log(CRIT, "worker initialization error: failed to execute the \"init_worker\" handler for plugin \"",
                  plugin.name, "\": ", perr, "; this node must be restarted")
      end
    end
  end
end

--- ssl_certificate_by_lua: the certificate of the client's server name. The worker first takes
-- the node's newest snapshot (plugins are configured with it at the next request).
function Kong.ssl_certificate()
  clustering.refresh()
  certificate.execute(clustering.current().certificates)
end

--- The rewrite phase of the @unbuffered* locations, after access's internal redirect there:
-- the request's ctx comes back and the phases already ran (Kong.rewrite with
-- $kong_proxy_mode "unbuffered").
function Kong.rewrite_unbuffered()
  resty_ctx.apply_ref()
  local ctx = ngx.ctx
  resty_ctx.stash_ref()
  ctx.unbuffered_location = true
  ctx.KONG_REWRITE_ENDED_AT = get_now_ms()
  ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
end

function Kong.rewrite()
  local ctx = get_ctx_table(tablepool.fetch(CTX_NS, 0, CTX_NREC))
  refresh()

  if not ctx.KONG_PROCESSING_START then
    ctx.KONG_PROCESSING_START = get_start_time_ms()
  end
  if not ctx.KONG_REWRITE_START then
    ctx.KONG_REWRITE_START = get_now_ms()
  end
  ctx.KONG_PHASE = PHASE_REWRITE

  resty_ctx.stash_ref()
  runloop.rewrite.before(ctx)
  execute_global_plugins("rewrite", ctx)

  ctx.KONG_REWRITE_ENDED_AT = get_updated_now_ms()
  ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
end

function Kong.access()
  local ctx = ngx.ctx
  if not ctx.KONG_ACCESS_START then
    ctx.KONG_ACCESS_START = get_now_ms()
    if ctx.KONG_REWRITE_START and not ctx.KONG_REWRITE_ENDED_AT then
      ctx.KONG_REWRITE_ENDED_AT = ctx.KONG_ACCESS_START
      ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
    end
  end
  ctx.KONG_PHASE = PHASE_ACCESS

  local rt = clustering.current()
  runloop.access.before(ctx, rt, kong.ip.is_trusted, trusts_anyone)

  execute_collecting_plugins(ctx, rt)

  if ctx.delayed_response then
    ctx.KONG_ACCESS_ENDED_AT = get_updated_now_ms()
    ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START
    ctx.KONG_RESPONSE_LATENCY = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_PROCESSING_START
    return flush_delayed_response(ctx)
  end

  ctx.delay_response = nil

  if not ctx.service then
    ctx.KONG_ACCESS_ENDED_AT = get_updated_now_ms()
    ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START
    ctx.KONG_RESPONSE_LATENCY = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_PROCESSING_START
    ctx.buffered_proxying = nil
    return kong.response.error(503, "no Service found with those values")
  end

  runloop.access.after(ctx)

  ctx.KONG_ACCESS_ENDED_AT = get_updated_now_ms()
  ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START

  -- we intend to proxy, though the balancer may fail
  ctx.KONG_PROXIED = true

  if ctx.buffered_proxying then
    local upgrade = var.upstream_upgrade or ""
    if upgrade == "" then
      return Kong.response()
    end
    log(NOTICE, "response buffering was turned off: connection upgrade (", upgrade, ")")
    ctx.buffered_proxying = nil
  end
end

do
  local HTTP_METHODS = {
    GET = ngx.HTTP_GET, HEAD = ngx.HTTP_HEAD, PUT = ngx.HTTP_PUT, POST = ngx.HTTP_POST,
    DELETE = ngx.HTTP_DELETE, OPTIONS = ngx.HTTP_OPTIONS, MKCOL = ngx.HTTP_MKCOL, COPY = ngx.HTTP_COPY,
    MOVE = ngx.HTTP_MOVE, PROPFIND = ngx.HTTP_PROPFIND, PROPPATCH = ngx.HTTP_PROPPATCH,
    LOCK = ngx.HTTP_LOCK, UNLOCK = ngx.HTTP_UNLOCK, PATCH = ngx.HTTP_PATCH, TRACE = ngx.HTTP_TRACE,
  }

  --- kong/init.lua Kong.response: buffered proxying. The upstream's response is fetched whole
  -- by a subrequest (the balancer runs there, with this ctx), the plugins' response handlers
  -- see it, then it is sent as any response Kong makes.
  function Kong.response()
    local ctx = ngx.ctx

    ngx.req.read_body()
    local method = HTTP_METHODS[ngx.req.get_method()]
    local res = ngx.location.capture("/kong_buffered_http", {
      always_forward_body = true,
      share_all_vars = true,
      method = method,
      ctx = ctx,
    })

    if res.truncated and method ~= ngx.HTTP_HEAD then
      ctx.KONG_PHASE = PHASE_ERROR
      ngx.status = res.status or 502
      return error_handlers(ctx)
    end

    ctx.KONG_PHASE = PHASES.response

    local status = res.status
    local headers = res.header
    local body = res.body
    ctx.buffered_status = status
    ctx.buffered_headers = headers
    ctx.buffered_body = body

    if not ctx.KONG_RESPONSE_START then
      ctx.KONG_RESPONSE_START = get_now_ms()
      if ctx.KONG_BALANCER_START and not ctx.KONG_BALANCER_ENDED_AT then
        ctx.KONG_BALANCER_ENDED_AT = ctx.KONG_RESPONSE_START
        ctx.KONG_BALANCER_TIME = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_BALANCER_START
      end
    end
    if not ctx.KONG_WAITING_TIME then
      ctx.KONG_WAITING_TIME = ctx.KONG_RESPONSE_START - (ctx.KONG_BALANCER_ENDED_AT or ctx.KONG_ACCESS_ENDED_AT)
    end
    if not ctx.KONG_PROXY_LATENCY then
      ctx.KONG_PROXY_LATENCY = ctx.KONG_RESPONSE_START - ctx.KONG_PROCESSING_START
    end

    kong.response.set_status(status)
    kong.response.set_headers(headers)

    execute_collected_plugins("response", ctx)

    ctx.KONG_RESPONSE_ENDED_AT = get_updated_now_ms()
    ctx.KONG_RESPONSE_TIME = ctx.KONG_RESPONSE_ENDED_AT - ctx.KONG_RESPONSE_START

    ngx.print(body)
    -- jump over the balancer to header_filter
    ngx.exit(status)
  end
end

function Kong.balancer()
  local ctx = ngx.ctx
  local now_ms = get_now_ms()

  if not ctx.KONG_BALANCER_START then
    ctx.KONG_BALANCER_START = now_ms
    if ctx.KONG_REWRITE_START and not ctx.KONG_REWRITE_ENDED_AT then
      ctx.KONG_REWRITE_ENDED_AT = ctx.KONG_ACCESS_START or ctx.KONG_BALANCER_START
      ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
    end
    if ctx.KONG_ACCESS_START and not ctx.KONG_ACCESS_ENDED_AT then
      ctx.KONG_ACCESS_ENDED_AT = ctx.KONG_BALANCER_START
      ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START
    end
  end

  ctx.KONG_PHASE = PHASE_BALANCER

  local balancer_data = ctx.balancer_data
  local tries = balancer_data.tries
  local try_count = balancer_data.try_count + 1
  balancer_data.try_count = try_count
  local current_try = { balancer_start = now_ms }
  tries[try_count] = current_try

  if try_count > 1 then
    local previous = tries[try_count - 1]
    previous.state, previous.code = get_last_failure()
  elseif balancer_data.retries > 0 then
    set_more_tries(balancer_data.retries)
  end

  local ip = balancer_data.ip
  local port = balancer_data.port
  current_try.ip = ip
  current_try.port = port

  local peer = ip
  if balancer_data.type == "ipv6" then
    peer = "[" .. ip .. "]"
  end
  local ok, err = set_current_peer(peer, port)
  if not ok then
    log(ERR, "failed to set the current peer (address: ", tostring(ip), " port: ", tostring(port), "): ", tostring(err))
    ctx.KONG_BALANCER_ENDED_AT = get_updated_now_ms()
    ctx.KONG_BALANCER_TIME = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_BALANCER_START
    ctx.KONG_PROXY_LATENCY = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_PROCESSING_START
    return ngx.exit(500)
  end

  ok, err = set_timeouts(balancer_data.connect_timeout / 1000, balancer_data.send_timeout / 1000,
                         balancer_data.read_timeout / 1000)
  if not ok then
    log(ERR, "could not set upstream timeouts: ", err)
  end

  ctx.KONG_BALANCER_ENDED_AT = get_updated_now_ms()
  ctx.KONG_BALANCER_TIME = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_BALANCER_START
  current_try.balancer_latency = ctx.KONG_BALANCER_ENDED_AT - current_try.balancer_start
  ctx.KONG_PROXY_LATENCY = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_PROCESSING_START
end

function Kong.header_filter()
  local ctx = ngx.ctx

  if not ctx.KONG_PROCESSING_START then
    ctx.KONG_PROCESSING_START = get_start_time_ms()
  end

  if not ctx.KONG_HEADER_FILTER_START then
    ctx.KONG_HEADER_FILTER_START = get_now_ms()

    if ctx.KONG_REWRITE_START and not ctx.KONG_REWRITE_ENDED_AT then
      ctx.KONG_REWRITE_ENDED_AT = ctx.KONG_BALANCER_START or ctx.KONG_ACCESS_START or ctx.KONG_HEADER_FILTER_START
      ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
    end
    if ctx.KONG_ACCESS_START and not ctx.KONG_ACCESS_ENDED_AT then
      ctx.KONG_ACCESS_ENDED_AT = ctx.KONG_BALANCER_START or ctx.KONG_HEADER_FILTER_START
      ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START
    end
    if ctx.KONG_BALANCER_START and not ctx.KONG_BALANCER_ENDED_AT then
      ctx.KONG_BALANCER_ENDED_AT = ctx.KONG_HEADER_FILTER_START
      ctx.KONG_BALANCER_TIME = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_BALANCER_START
    end
  end

  if ctx.KONG_PROXIED then
    if not ctx.KONG_WAITING_TIME then
      ctx.KONG_WAITING_TIME = ctx.KONG_HEADER_FILTER_START - (ctx.KONG_BALANCER_ENDED_AT or ctx.KONG_ACCESS_ENDED_AT)
    end
    if not ctx.KONG_PROXY_LATENCY then
      ctx.KONG_PROXY_LATENCY = ctx.KONG_HEADER_FILTER_START - ctx.KONG_PROCESSING_START
    end
  elseif not ctx.KONG_RESPONSE_LATENCY then
    ctx.KONG_RESPONSE_LATENCY = ctx.KONG_HEADER_FILTER_START - ctx.KONG_PROCESSING_START
  end

  ctx.KONG_PHASE = PHASE_HEADER_FILTER

  runloop.header_filter.before(ctx)
  execute_collected_plugins("header_filter", ctx)
  runloop.header_filter.after(ctx)

  ctx.KONG_HEADER_FILTER_ENDED_AT = get_updated_now_ms()
  ctx.KONG_HEADER_FILTER_TIME = ctx.KONG_HEADER_FILTER_ENDED_AT - ctx.KONG_HEADER_FILTER_START
end

function Kong.body_filter()
  local ctx = ngx.ctx

  local expect = ctx.expect_set_aside
  local logged = has_handlers("log", ctx)
  if not logged and not expect and not ctx.response_body and not has_handlers("body_filter", ctx) then
    ctx.KONG_PHASE = PHASE_BODY_FILTER
    return
  end

  if logged and not ctx.KONG_BODY_FILTER_START then
    ctx.KONG_BODY_FILTER_START = get_now_ms()
    if ctx.KONG_HEADER_FILTER_START and not ctx.KONG_HEADER_FILTER_ENDED_AT then
      ctx.KONG_HEADER_FILTER_ENDED_AT = ctx.KONG_BODY_FILTER_START
      ctx.KONG_HEADER_FILTER_TIME = ctx.KONG_HEADER_FILTER_ENDED_AT - ctx.KONG_HEADER_FILTER_START
    end
  end

  ctx.KONG_PHASE = PHASE_BODY_FILTER

  if expect and arg[2] then
    -- kong.response.exit's (pdk/response.lua): ngx_lua has discarded the request body by now
    ctx.expect_set_aside = nil
    ngx.req.set_header("Expect", expect)
  end

  if ctx.response_body then
    arg[1] = ctx.response_body
    arg[2] = true
  end

  execute_collected_plugins("body_filter", ctx)

  if not logged or not arg[2] then
    return
  end

  ctx.KONG_BODY_FILTER_ENDED_AT = get_updated_now_ms()
  ctx.KONG_BODY_FILTER_TIME = ctx.KONG_BODY_FILTER_ENDED_AT - ctx.KONG_BODY_FILTER_START

  if ctx.KONG_PROXIED then
    ctx.KONG_RECEIVE_TIME = ctx.KONG_BODY_FILTER_ENDED_AT - (ctx.KONG_HEADER_FILTER_START or
                                                             ctx.KONG_BALANCER_ENDED_AT or
                                                             ctx.KONG_BALANCER_START or
                                                             ctx.KONG_ACCESS_ENDED_AT)
  end
end

function Kong.log()
  local ctx = ngx.ctx

  local logged = has_handlers("log", ctx)
  if logged and not ctx.KONG_LOG_START then
    ctx.KONG_LOG_START = get_now_ms()
    if ctx.KONG_REWRITE_START and not ctx.KONG_REWRITE_ENDED_AT then
      ctx.KONG_REWRITE_ENDED_AT = ctx.KONG_ACCESS_START or ctx.KONG_BALANCER_START or
                                  ctx.KONG_HEADER_FILTER_START or ctx.KONG_LOG_START
      ctx.KONG_REWRITE_TIME = ctx.KONG_REWRITE_ENDED_AT - ctx.KONG_REWRITE_START
    end
    if ctx.KONG_ACCESS_START and not ctx.KONG_ACCESS_ENDED_AT then
      ctx.KONG_ACCESS_ENDED_AT = ctx.KONG_BALANCER_START or ctx.KONG_HEADER_FILTER_START or ctx.KONG_LOG_START
      ctx.KONG_ACCESS_TIME = ctx.KONG_ACCESS_ENDED_AT - ctx.KONG_ACCESS_START
    end
    if ctx.KONG_BALANCER_START and not ctx.KONG_BALANCER_ENDED_AT then
      ctx.KONG_BALANCER_ENDED_AT = ctx.KONG_HEADER_FILTER_START or ctx.KONG_LOG_START
      ctx.KONG_BALANCER_TIME = ctx.KONG_BALANCER_ENDED_AT - ctx.KONG_BALANCER_START
    end
    if ctx.KONG_HEADER_FILTER_START and not ctx.KONG_HEADER_FILTER_ENDED_AT then
      ctx.KONG_HEADER_FILTER_ENDED_AT = ctx.KONG_LOG_START
      ctx.KONG_HEADER_FILTER_TIME = ctx.KONG_HEADER_FILTER_ENDED_AT - ctx.KONG_HEADER_FILTER_START
    end
    if ctx.KONG_BODY_FILTER_START and not ctx.KONG_BODY_FILTER_ENDED_AT then
      ctx.KONG_BODY_FILTER_ENDED_AT = ctx.KONG_LOG_START
      ctx.KONG_BODY_FILTER_TIME = ctx.KONG_BODY_FILTER_ENDED_AT - ctx.KONG_BODY_FILTER_START
    end
    if ctx.KONG_PROXIED and not ctx.KONG_WAITING_TIME then
      ctx.KONG_WAITING_TIME = ctx.KONG_LOG_START - (ctx.KONG_BALANCER_ENDED_AT or ctx.KONG_ACCESS_ENDED_AT)
    end
  end

  ctx.KONG_PHASE = PHASE_LOG

  if logged then
    execute_collected_plugins("log", ctx)
  end
  lua_mem.update()

  local cfgs = ctx.plugins_cfgs
  if cfgs then
    ctx.plugins_cfgs = nil
    plugins_iterator.release_cfgs(cfgs)
  end

  tablepool.release(CTX_NS, ctx)
end

function Kong.handle_error()
  resty_ctx.apply_ref()

  local ctx = ngx.ctx
  if not ctx.request_id then
    -- nginx answered before the rewrite phase
    var.kong_request_id = request_id(ctx)
  end
  ctx.KONG_PHASE = PHASE_ERROR
  ctx.KONG_UNEXPECTED = true

  return error_handlers(ctx)
end

--- The Status API (kong.status).
function Kong.status_content()
  ngx.ctx.KONG_PHASE = PHASES.admin_api
  -- what the status routes report (the hash, the plugins' configure state) is the node's latest
  refresh()
  return status.serve()
end

function Kong.status_header_filter()
  local enabled = kong.configuration.enabled_headers
  if enabled[constants.HEADERS.SERVER] then
    ngx.header[constants.HEADERS.SERVER] = meta._SERVER_TOKENS
  else
    ngx.header[constants.HEADERS.SERVER] = nil
  end
end

return Kong
