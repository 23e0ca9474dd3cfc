-- The parts of kong/constants.lua (3.9.3) the data plane uses.
return {
  HEADERS = {
    PROXY_LATENCY = "X-Kong-Proxy-Latency",
    RESPONSE_LATENCY = "X-Kong-Response-Latency",
    ADMIN_LATENCY = "X-Kong-Admin-Latency",
    UPSTREAM_LATENCY = "X-Kong-Upstream-Latency",
    UPSTREAM_STATUS = "X-Kong-Upstream-Status",
    CONSUMER_ID = "X-Consumer-ID",
    CONSUMER_CUSTOM_ID = "X-Consumer-Custom-ID",
    CONSUMER_USERNAME = "X-Consumer-Username",
    CREDENTIAL_IDENTIFIER = "X-Credential-Identifier",
    CONSUMER_GROUPS = "X-Consumer-Groups",
    AUTHENTICATED_GROUPS = "X-Authenticated-Groups",
    RATELIMIT_LIMIT = "X-RateLimit-Limit",
    RATELIMIT_REMAINING = "X-RateLimit-Remaining",
    FORWARDED_HOST = "X-Forwarded-Host",
    FORWARDED_PATH = "X-Forwarded-Path",
    FORWARDED_PREFIX = "X-Forwarded-Prefix",
    ANONYMOUS = "X-Anonymous-Consumer",
    REQUEST_ID = "X-Kong-Request-Id",
    VIA = "Via",
    SERVER = "Server",
  },

  RESPONSE_SOURCE = {
    TYPES = {
      ERROR = "error",
      EXIT = "exit",
      SERVICE = "service",
    },
    NAMES = {
      error = "kong",
      exit = "kong",
      service = "upstream",
    },
  },

  PROTOCOLS_WITH_SUBSYSTEM = {
    http = "http",
    https = "http",
    grpc = "http",
    grpcs = "http",
    tcp = "stream",
    tls = "stream",
    udp = "stream",
    tls_passthrough = "stream",
  },

  -- kong_snapshot shared dict keys
  SNAPSHOT_JSON_KEY = "snapshot:json",
  SNAPSHOT_HASH_KEY = "snapshot:hash",
  -- a number bumped with every snapshot published: what each request compares
  SNAPSHOT_GENERATION_KEY = "snapshot:generation",
  -- kong shared dict keys
  NODE_ID_KEY = "kong:node_id",
  -- false once the node drains (kong/status/ready.lua)
  KONG_STATUS_READY_KEY = "kong:status:ready",
  TEST_CLOCK_KEY = "kong:test_clock_ms",
}
