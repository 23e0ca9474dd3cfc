-- kong.pdk.private.checks and kong.pdk.private.phases (Kong 3.9.3 kong/pdk/private/*.lua).
local checks = require "kong.pdk.private.checks"
local phases = require "kong.pdk.private.phases"

describe("kong.pdk.private.checks", function()
  it("normalize_multi_header: '' goes out as ' ', numbers and booleans as strings", function()
    assert.equal(" ", checks.normalize_multi_header(""))
    assert.equal("42", checks.normalize_multi_header(42))
    assert.equal("true", checks.normalize_multi_header(true))
    assert.same({ "a", " " }, checks.normalize_multi_header({ "a", "" }))
  end)

  it("validate_header: what Kong refuses, and how it says so", function()
    assert.has_error(function() checks.validate_header(7, "v") end, 'invalid header name "7": got number, expected string')
    assert.has_error(function() checks.validate_header("X", { 1 }) end,
                     'invalid header value in array "X": got number, expected string')
    assert.has_error(function() checks.validate_header("X", function() end) end,
                     'invalid header value for "X": got function, expected array of string, string, number or boolean')
    assert.equal("1.5", checks.validate_header("X", 1.5))
  end)

  it("validate_headers: every entry, with its own wording", function()
    assert.has_error(function() checks.validate_headers("x") end, "headers must be a table")
    assert.has_error(function() checks.validate_headers({ X = {} , Y = function() end }) end,
                     'invalid header value for "Y": got function, expected string, number, boolean or array of strings')
  end)
end)

describe("kong.pdk.private.phases", function()
  local real_ngx = ngx

  local function in_phase(phase, f)
    _G.ngx = setmetatable({ ctx = { KONG_PHASE = phase } }, { __index = real_ngx })
    local ok, err = pcall(f)
    _G.ngx = real_ngx
    if not ok then
      error(err, 0)
    end
  end

  it("check: fine in an accepted phase, else names the phase and the accepted ones", function()
    local accepted = phases.new(phases.phases.access, phases.phases.header_filter)
    in_phase(phases.phases.access, function() phases.check(accepted) end)
    assert.has_error(function()
      in_phase(phases.phases.log, function() phases.check(accepted) end)
    end, "function cannot be called in log phase (only in: access, header_filter)")
  end)

  it("the request alias covers rewrite to log", function()
    for _, name in ipairs({ "rewrite", "access", "balancer", "header_filter", "body_filter", "log" }) do
      in_phase(phases.phases[name], function() phases.check(phases.phases.request) end)
    end
    assert.has_error(function()
      in_phase(phases.phases.init_worker, function() phases.check(phases.phases.request) end)
    end)
  end)

  it("an unknown alias is an error", function()
    assert.has_error(function() return phases.phases.nope end, "unknown phase or phase alias: nope")
  end)
end)
