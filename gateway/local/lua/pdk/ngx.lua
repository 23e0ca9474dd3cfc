-- The ngx API plugins may use here: shared dicts, the clock, constants. Anything else is refused
-- by name, pointing at the PDK, rather than answered wrongly.
local config = require "pdk.config"
local json = require "cjson"
local log = require "pdk.log"
local phase = require "pdk.phase"
local shared_dicts = require "pdk.shared_dict"

local ngx = {
  null = json.null,
  shared = shared_dicts(config.shared_dicts),
  now = function() return phase.now_ms / 1000 end,
  time = function() return math.floor(phase.now_ms / 1000) end,
  update_time = function() end,
  log = function(_, ...) log.notice(...) end,
  STDERR = 0, EMERG = 1, ALERT = 2, CRIT = 3, ERR = 4, WARN = 5, NOTICE = 6, INFO = 7, DEBUG = 8,
  OK = 0, ERROR = -1, HTTP_OK = 200, HTTP_BAD_REQUEST = 400, HTTP_UNAUTHORIZED = 401,
  HTTP_FORBIDDEN = 403, HTTP_NOT_FOUND = 404, HTTP_TOO_MANY_REQUESTS = 429,
  HTTP_INTERNAL_SERVER_ERROR = 500, HTTP_SERVICE_UNAVAILABLE = 503,
}

return setmetatable(ngx, { __index = function(_, k)
  error("ngx." .. tostring(k) .. " is not available in the local gateway; use the Kong PDK", 2)
end })
