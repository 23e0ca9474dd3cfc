-- The node's real clock: nginx's cached time as ngx.now and ngx.time gave it when this module
-- loaded, before the test clock (kong.test_clock) could replace them. What measures durations or
-- paces the node's own work (latencies, DNS ages, the poller's back-off, memory sampling, scrape
-- times) reads it here; what plugins see as "now" is ngx.now / ngx.time, read at call time.
return {
  real_now = ngx.now,
  real_time = ngx.time,
}
