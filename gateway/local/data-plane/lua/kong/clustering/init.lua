-- kong.clustering: how a node gets its configuration and every worker runs it (README "The
-- snapshot and its delivery"). Worker 0 long-polls the control plane (poller.lua); a snapshot
-- it can run is written to <prefix>/snapshot.json and published in the kong_snapshot shared
-- dict (JSON, then its hash); every worker compares its hash with the dict's at the start of
-- each request (and on an idle timer) and rebuilds its runtime when they differ.
local ffi = require "ffi"
local constants = require "kong.constants"
local snapshot = require "kong.clustering.snapshot"
local runtime = require "kong.clustering.runtime"

local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local NOTICE = ngx.NOTICE
local io_open = io.open
local os_rename = os.rename
local os_remove = os.remove
local C = ffi.C

ffi.cdef [[
  unsigned int umask(unsigned int mask);
]]

-- 077: the snapshot holds certificates' private keys and key-auth keys (Kong's lmdb store: 0600)
local OWNER_ONLY_UMASK = 63

local JSON_KEY = constants.SNAPSHOT_JSON_KEY
local HASH_KEY = constants.SNAPSHOT_HASH_KEY
local GENERATION_KEY = constants.SNAPSHOT_GENERATION_KEY

local dict = ngx.shared.kong_snapshot

local EMPTY_SNAPSHOT = {
  config_hash = "",
  config_version = 0,
  certificates = {},
  snis = {},
  services = {},
  routes = {},
  consumers = {},
  keyauth_credentials = {},
  acls = {},
  plugins = {},
}

local clustering = {}

local loaded_plugins
local snapshot_path
-- the generation this worker runs, and one it could not build (not retried on every request)
local running_generation = 0
local unbuildable_generation

function clustering.configure(prefix, loaded)
  snapshot_path = prefix .. "/snapshot.json"
  loaded_plugins = loaded
end

--- A new worker runs nothing yet (the master's Lua state, forked, may say otherwise).
function clustering.start_worker()
  running_generation = 0
  unbuildable_generation = nil
end

--- Decodes, checks and builds; the runtime, or nil and why not.
function clustering.build(json)
  local doc, err = snapshot.decode(json)
  if not doc then
    return nil, err
  end
  return runtime.build(doc, loaded_plugins)
end

function clustering.empty_runtime()
  return assert(runtime.build(EMPTY_SNAPSHOT, loaded_plugins))
end

--- Writes `path` through a temporary file and a rename, owner-only whatever nginx's umask.
local function write_file(path, contents)
  local tmp = path .. ".tmp." .. ngx.worker.pid()
  -- a leftover of a killed worker would keep its mode through io.open's truncation
  os_remove(tmp)
  local umask = C.umask(OWNER_ONLY_UMASK)
  local file, err = io_open(tmp, "w")
  C.umask(umask)
  if not file then
    return nil, err
  end
  local ok
  ok, err = file:write(contents)
  file:close()
  if not ok then
    os_remove(tmp)
    return nil, err
  end
  ok, err = os_rename(tmp, path)
  if not ok then
    os_remove(tmp)
    return nil, err
  end
  return true
end

function clustering.read_file()
  local file = io_open(snapshot_path, "r")
  if not file then
    return nil
  end
  local json = file:read("*a")
  file:close()
  return json
end

--- Makes a snapshot this worker built the node's: snapshot.json, then the shared dict.
function clustering.publish(json, rt, persist)
  if persist then
    local ok, err = write_file(snapshot_path, json)
    if not ok then
      return nil, "could not write " .. snapshot_path .. ": " .. tostring(err)
    end
  end
  local ok, err = dict:set(JSON_KEY, json)
  if not ok then
    return nil, "could not store the snapshot in the kong_snapshot shared dict: " .. tostring(err)
  end
  ok, err = dict:set(HASH_KEY, rt.hash)
  if not ok then
    return nil, "could not store the snapshot hash: " .. tostring(err)
  end
  local generation
  generation, err = dict:incr(GENERATION_KEY, 1, 0)
  if not generation then
    return nil, "could not count the snapshot generation: " .. tostring(err)
  end
  -- the publishing worker runs it already (it built it)
  running_generation = generation
  return true
end

--- The hash of the snapshot this worker runs.
function clustering.current_hash()
  local rt = runtime.current()
  return rt and rt.hash or ""
end

--- Rebuilds this worker's runtime when the node took another snapshot. One shared-dict read
-- (a number) when nothing changed.
function clustering.refresh()
  local generation = dict:get(GENERATION_KEY)
  if generation == nil or generation == running_generation or generation == unbuildable_generation then
    return
  end

  local json = dict:get(JSON_KEY)
  local rt, err = clustering.build(json)
  if not rt then
    unbuildable_generation = generation
    log(ERR, "could not build the runtime of the snapshot published by worker 0 (generation ",
             generation, "): ", err)
    return
  end
  running_generation = generation
  runtime.install(rt)
  log(NOTICE, "worker ", ngx.worker.id(), " runs configuration ", rt.hash, " (version ", rt.version, ")")
end

clustering.install = runtime.install
clustering.current = runtime.current

return clustering
