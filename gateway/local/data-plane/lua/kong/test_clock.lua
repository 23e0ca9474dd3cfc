-- The test clock (README "Test clock"): with kong_conf.json test_clock = true, PUT /clock?ms=<unix
-- ms> on unix:<prefix>/test-clock.sock sets the time ngx.now() and ngx.time() answer, for every
-- worker (it lives in the kong shared dict). Never installed otherwise. The node's own timing
-- keeps the real clock (kong.tools.clock), loaded here so that it is loaded before the patch.
local constants = require "kong.constants"
local real_clock = require "kong.tools.clock"

local floor = math.floor
local tonumber = tonumber

local KEY = constants.TEST_CLOCK_KEY

local real_now = real_clock.real_now
local real_time = real_clock.real_time

local clock = {
  installed = false,
}

--- Patches ngx.now and ngx.time (once, in init, before plugins capture them).
function clock.install()
  if clock.installed then
    return
  end
  clock.installed = true
  local dict = ngx.shared.kong

  ngx.now = function()
    local ms = dict:get(KEY)
    if ms then
      return ms / 1000
    end
    return real_now()
  end

  ngx.time = function()
    local ms = dict:get(KEY)
    if ms then
      return floor(ms / 1000)
    end
    return real_time()
  end
end

--- content_by_lua of the test clock's server (nginx.conf, only when test_clock is on).
function clock.serve()
  local method = ngx.req.get_method()
  if method == "GET" then
    ngx.header["Content-Type"] = "application/json"
    ngx.say('{"ms":', ngx.shared.kong:get(KEY) or "null", "}")
    return
  end
  if method ~= "PUT" then
    ngx.status = 405
    ngx.say("PUT /clock?ms=<unix ms>")
    return
  end
  local ms = tonumber(ngx.var.arg_ms)
  if not ms or ms < 0 or ms ~= floor(ms) then
    ngx.status = 400
    ngx.say("ms must be a non-negative integer (unix milliseconds)")
    return
  end
  local ok, err = ngx.shared.kong:set(KEY, ms)
  if not ok then
    ngx.status = 500
    ngx.say("could not set the clock: ", err)
    return
  end
  ngx.status = 204
end

return clock
