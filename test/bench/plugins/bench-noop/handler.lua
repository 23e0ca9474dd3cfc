-- A plugin whose three phases do nothing: what the bridge costs per phase call, whatever the
-- plugin does (test/bench/lua-bench.ts).
local Noop = { PRIORITY = 1, VERSION = "1.0.0" }

function Noop.access() end
function Noop.header_filter() end
function Noop.body_filter() end

return Noop
