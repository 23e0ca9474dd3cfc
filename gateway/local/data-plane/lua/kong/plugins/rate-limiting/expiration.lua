-- Seconds in each period, as kong/plugins/rate-limiting/expiration.lua: a month is 30 days and a
-- year 365, for counter lifetimes and RateLimit-Reset alike.
return {
  second = 1,
  minute = 60,
  hour   = 3600,
  day    = 86400,
  month  = 2592000,
  year   = 31536000,
}
