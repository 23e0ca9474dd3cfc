-- Configuration of the animal-store-edge plugin (Kong 3.9 schema DSL).
local typedefs = require "kong.db.schema.typedefs"
local redis_schema = require "kong.tools.redis.schema"

return {
  name = "animal-store-edge",
  fields = {
    { consumer = typedefs.no_consumer },
    { protocols = typedefs.protocols_http },
    { config = {
        type = "record",
        fields = {
          -- The header key-auth reads (its key_names); the bearer token is handed over in it.
          { key_header = { type = "string", required = true, default = "apikey", match = "^[%w_-]+$" } },
          { realm = { type = "string", required = true, default = "animal-store" } },
          -- Temporary ban: more than ban_threshold 429 responses within ban_window seconds ban
          -- the key for ban_duration seconds.
          { ban_threshold = { type = "integer", required = true, default = 20, gt = 0 } },
          { ban_window = { type = "integer", required = true, default = 60, gt = 0 } },
          { ban_duration = { type = "integer", required = true, default = 900, gt = 0 } },
          -- lua_shared_dict holding strikes and bans (KONG_NGINX_HTTP_LUA_SHARED_DICT).
          { dict_name = { type = "string", required = true, default = "animal_store_edge" } },
          -- Migration aid, off by default: also accept keys whose credentials are still stored in
          -- clear (before `npm run consumers -- hash-keys` has run). A token whose digest no
          -- credential holds is then handed to key-auth as is, if a credential not tagged
          -- key-hash:sha256 holds it. Costs up to two cached credential look-ups per request;
          -- turn it off once hash-keys has run.
          { accept_plaintext_keys = { type = "boolean", required = true, default = false } },
          -- Production: plain HTTP is refused with 426 in the Error shape, before the key is read
          -- (kong.yml gives it DECK_ANIMAL_STORE_HTTPS_ONLY), and responses that went over TLS
          -- carry Strict-Transport-Security. Off for `npm start`, which serves plain HTTP too.
          { https_only = { type = "boolean", required = true, default = false } },
          -- With https_only, what a plain-HTTP GET or HEAD gets: 426 (an API's client must see the
          -- error), or a redirect to https://<host><uri> with this status (web pages: a browser
          -- follows it; the values of a route's https_redirect_status_code). Any other method is
          -- refused 426 either way: its body, a form's password, has crossed the network in clear.
          { https_redirect_status_code = { type = "integer", required = true, default = 426, one_of = { 426, 301, 302, 307, 308 } } },
          -- Where strikes and bans are kept: "local", this node's dict; "redis", shared by every
          -- node through `redis` (rate-limiting's record), the dict standing in while Redis is
          -- unreachable. kong.yml gives it rate-limiting's policy (DECK_RATE_LIMIT_POLICY).
          { policy = { type = "string", required = true, default = "local", one_of = { "local", "redis" } } },
          { redis = redis_schema.config_schema },
        },
    } },
  },
}
