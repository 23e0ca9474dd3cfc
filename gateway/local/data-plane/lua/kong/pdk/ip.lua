-- kong.ip (kong/pdk/ip.lua, 3.9.3): is an address among trusted_ips?
local ip = require "kong.tools.ip"

return {
  new = function(self)
    local _IP = {}
    local trusted, all_v4, all_v6 = {}, false, false
    for _, entry in ipairs(self.configuration.trusted_ips or {}) do
      if ip.is_valid_ip_or_cidr(entry) then
        trusted[#trusted + 1] = entry
        all_v4 = all_v4 or entry == "0.0.0.0/0"
        all_v6 = all_v6 or entry == "::/0"
      end
    end

    if #trusted == 0 then
      _IP.is_trusted = function() return false end
    elseif all_v4 and all_v6 then
      _IP.is_trusted = function() return true end
    else
      _IP.is_trusted = ip.new_matcher(trusted)
    end

    return _IP
  end,
}
