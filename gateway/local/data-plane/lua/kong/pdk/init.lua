-- kong/pdk/init.lua (3.9.3): the `kong` global plugins see. The modules the data plane offers
-- are listed below; each is built from `self` (the kong table) as Kong builds them.
local phase_checker = require "kong.pdk.private.phases"

local get_request = require("resty.core.base").get_request
local rawget = rawget
local setmetatable = setmetatable

local MODULES = {
  "table",
  "node",
  "log",
  "ctx",
  "ip",
  "client",
  "service",
  "request",
  "service.request",
  "service.response",
  "response",
  "router",
  "nginx",
  "plugin",
}

local PDK = {}

function PDK.new(configuration, self)
  self = self or {}

  self.configuration = setmetatable({}, {
    __index = configuration,
    __newindex = function()
      error("cannot write to configuration", 2)
    end,
  })

  for _, name in ipairs(MODULES) do
    local parent = self
    for part in name:gmatch("([^.]+)%.") do
      parent[part] = parent[part] or {}
      parent = parent[part]
    end
    parent[name:match("[^.]*$")] = require("kong.pdk." .. name).new(self)
  end

  -- kong.log is the running plugin's namespaced logger during its handlers (ngx.ctx.KONG_LOG)
  self._log = self.log
  self.log = nil

  return setmetatable(self, {
    __index = function(t, k)
      if k == "log" then
        if get_request() then
          local log = ngx.ctx.KONG_LOG
          if log then
            return log
          end
        end
        return (rawget(t, "_log"))
      end
    end,
  })
end

PDK.phases = phase_checker.phases

return PDK
