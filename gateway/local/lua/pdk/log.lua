-- kong.log (kong/pdk/log.lua): lines go to the gateway's log, prefixed with the plugin's name.
local phase = require "pdk.phase"

local concat, select, tostring = table.concat, select, tostring
local js_log = __js_log

local log = {}

local function logger(level)
  return function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    js_log(level, tostring(phase.plugin) .. ": " .. concat(parts))
  end
end
log.err = logger("err")
log.warn = logger("warn")
log.notice = logger("notice")
log.info = logger("info")
log.debug = logger("debug")
log.set_serialize_value = function() end
setmetatable(log, { __call = function(_, ...) return log.notice(...) end })

return log
