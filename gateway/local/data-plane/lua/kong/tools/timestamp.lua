-- kong.tools.timestamp, as Kong 3.9 has it (kong/tools/timestamp.lua), without luatz: the UTC start
-- of the second, minute, hour, day, month and year that contain an instant, in milliseconds.
-- Civil dates from day counts with Howard Hinnant's days_from_civil / civil_from_days.
local ngx = ngx
local floor = math.floor


-- An instant above this (the year 20000 in seconds) is in milliseconds, as Kong assumes.
local MS_CHECK = 568971820800


-- ngx.now is read at call time: the test clock replaces it.
local function get_utc()
  return floor(ngx.now()) * 1000
end


local function get_utc_ms()
  return ngx.now() * 1000
end


local function days_from_civil(y, m, d)
  if m <= 2 then
    y = y - 1
  end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end


-- Returns the year and month of a day count (days since 1970-01-01), and the day of the month.
local function civil_from_days(z)
  z = z + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local d = doy - floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then
    y = y + 1
  end
  return y, m, d
end


--- Fills `stamps` (or a new table) with the period starts, in milliseconds, of `instant`
--- (seconds or milliseconds; the current time when nil), reduced to second precision.
local function get_timestamps(instant, stamps)
  local seconds = instant or get_utc()
  if seconds > MS_CHECK then
    seconds = seconds / 1000
  end
  seconds = floor(seconds)

  local days = floor(seconds / 86400)
  local y, _, d = civil_from_days(days)

  stamps = stamps or {}
  stamps.second = seconds * 1000
  stamps.minute = (seconds - seconds % 60) * 1000
  stamps.hour = (seconds - seconds % 3600) * 1000
  stamps.day = days * 86400000
  stamps.month = (days - d + 1) * 86400000
  stamps.year = days_from_civil(y, 1, 1) * 86400000
  return stamps
end


return {
  get_utc = get_utc,
  get_utc_ms = get_utc_ms,
  get_timestamps = get_timestamps,
  days_from_civil = days_from_civil,
  civil_from_days = civil_from_days,
  timestamp_table_fields = { "second", "minute", "hour", "day", "month", "year" },
}
