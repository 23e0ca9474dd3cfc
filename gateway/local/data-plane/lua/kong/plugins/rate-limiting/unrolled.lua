-- Loops over a configuration's periods (one to six) as straight-line code, generated once when
-- the module loads. The handler and the local policy write each per-period step once, as a
-- function of the period's index, and run it through these.
--
-- Why not `for i = 1, n`: the loop turns one to six times and is entered once a request, which is
-- what LuaJIT traces worst. A trace that starts at such a loop aborts when it leaves it ("leaving
-- loop in root trace"); one that reaches it from the handler unrolls at most a few turns. In a
-- LuaJIT micro-benchmark (numbers in the commit that introduced this module) one or two periods
-- ran alike looped; three took twice as long looped, six half as long again.
local load = load
local concat = table.concat
local assert = assert

local MAX_PERIODS = 6 -- second, minute, hour, day, month, year

--- One function: `head`, then `step` for periods 1 to 6, each but the first behind `guard`
-- (`#` is the period's index in both), then `tail`.
local function generate(name, head, step, guard, tail)
  local lines = { head, (step:gsub("#", 1)) }
  for i = 2, MAX_PERIODS do
    lines[#lines + 1] = (guard:gsub("#", i))
    lines[#lines + 1] = (step:gsub("#", i))
  end
  lines[#lines + 1] = tail
  -- the chunk name shows in tracebacks and in jit.v's output
  return assert(load(concat(lines, "\n"), "=rate-limiting/unrolled.lua " .. name))()
end

-- One function for every number of periods, as the hand-written form was: a function per number
-- would make the call sites polymorphic, and cost as much again when one node runs
-- configurations with different numbers of periods.
return {
  MAX_PERIODS = MAX_PERIODS,

  --- each_until(n, step, a, b, c, d): step(i, a, b, c, d) for i = 1 to n, in order, until one
  -- returns a value other than nil, which is returned; nil when none does.
  each_until = generate("each_until",
    "return function(n, step, a, b, c, d)\n  local result",
    "  result = step(#, a, b, c, d)",
    "  if result ~= nil or n < # then return result end",
    "  return result\nend"),

  --- fold(n, step, x, y, a, b, c, d): x, y = step(i, x, y, a, b, c, d) for i = 1 to n, in
  -- order; returns the last x, y.
  fold = generate("fold",
    "return function(n, step, x, y, a, b, c, d)",
    "  x, y = step(#, x, y, a, b, c, d)",
    "  if n < # then return x, y end",
    "  return x, y\nend"),
}
