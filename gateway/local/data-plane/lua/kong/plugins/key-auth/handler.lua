-- key-auth with Kong 3.9's behaviour (kong/plugins/key-auth/handler.lua): the key from the
-- request's headers or query string, the credential and its consumer from the data plane's entity
-- index, the consumer headers upstream. key_in_body is refused by the control plane.
local constants = require "kong.constants"
local kong_meta = require "kong.meta"
local entities = require "kong.runloop.entities"
local is_valid_uuid = require("kong.tools.uuid").is_valid_uuid
local request_headers = require("kong.tools.request_headers").get


local kong = kong
local ngx = ngx
local type = type
local error = error
local rawget = rawget
local setmetatable = setmetatable
local lower = string.lower
local gsub = string.gsub
local get_uri_args = ngx.req.get_uri_args
local get_method = ngx.req.get_method
local keyauth_credential = entities.keyauth_credential
local consumer_by_id = entities.consumer
local consumer_by_username = entities.consumer_by_username


local HEADERS_CONSUMER_ID           = constants.HEADERS.CONSUMER_ID
local HEADERS_CONSUMER_CUSTOM_ID    = constants.HEADERS.CONSUMER_CUSTOM_ID
local HEADERS_CONSUMER_USERNAME     = constants.HEADERS.CONSUMER_USERNAME
local HEADERS_CREDENTIAL_IDENTIFIER = constants.HEADERS.CREDENTIAL_IDENTIFIER
local HEADERS_ANONYMOUS             = constants.HEADERS.ANONYMOUS

-- kong.request.get_query() reads at most 100 (and kong.request.get_headers(), as
-- kong.tools.request_headers does, 100 headers).
local MAX_ARGS = 100

local ERR_DUPLICATE_API_KEY = "Duplicate API key found"
local ERR_NO_API_KEY        = "No API key found in request"
local ERR_INVALID_AUTH_CRED = "Unauthorized"
local ERR_UNEXPECTED        = "An unexpected error occurred"


local KeyAuthHandler = {
  VERSION = kong_meta.version,
  PRIORITY = 1250,
  -- Kong's loader sets this from the schema's `consumer = typedefs.no_consumer`; the schema lives
  -- on the control plane here, which refuses consumer-scoped key-auth instances.
  no_consumer = true,
}


-- What each configuration derives once: the WWW-Authenticate value and the header-table key of
-- every key name. A configuration is immutable while a snapshot lives and a new snapshot brings
-- new tables, so the weak keys let the old entries go.
local derived_by_conf = setmetatable({}, { __mode = "k" })


local function derive(conf)
  if conf.key_in_body then
    -- The control plane refuses it; a snapshot that has it anyway is not run without it.
    return error("key-auth: config.key_in_body is not supported by the local gateway")
  end

  local key_names = conf.key_names
  local header_keys = {}
  for i = 1, #key_names do
    -- ngx.req.get_headers() keys are lowercased names; its __index tries the name lowercased
    -- with "_" turned into "-". Precomputed here, the same lookup costs no string work.
    header_keys[i] = gsub(lower(key_names[i]), "_", "-")
  end

  local derived = {
    header_keys = header_keys,
    www_authenticate = conf.realm and ('Key realm="' .. conf.realm .. '"') or "Key",
  }
  derived_by_conf[conf] = derived
  return derived
end


local function set_consumer(consumer, credential)
  kong.client.authenticate(consumer, credential)

  local set_header = kong.service.request.set_header
  local clear_header = kong.service.request.clear_header

  if consumer and consumer.id then
    set_header(HEADERS_CONSUMER_ID, consumer.id)
  else
    clear_header(HEADERS_CONSUMER_ID)
  end

  if consumer and type(consumer.custom_id) == "string" then
    set_header(HEADERS_CONSUMER_CUSTOM_ID, consumer.custom_id)
  else
    clear_header(HEADERS_CONSUMER_CUSTOM_ID)
  end

  if consumer and type(consumer.username) == "string" then
    set_header(HEADERS_CONSUMER_USERNAME, consumer.username)
  else
    clear_header(HEADERS_CONSUMER_USERNAME)
  end

  if credential and credential.id then
    set_header(HEADERS_CREDENTIAL_IDENTIFIER, credential.id)
  else
    clear_header(HEADERS_CREDENTIAL_IDENTIFIER)
  end

  if credential then
    clear_header(HEADERS_ANONYMOUS)
  else
    set_header(HEADERS_ANONYMOUS, true)
  end
end


-- Returns true, or nil, the status, the message and the WWW-Authenticate value of the failure.
local function do_authentication(conf)
  local derived = derived_by_conf[conf] or derive(conf)
  local key_names = conf.key_names
  local header_keys = derived.header_keys
  -- Kong's kong.request.get_headers(): the table as it stands after the plugins before this one
  -- (the edge plugin's key header), shared and not built again
  local headers = conf.key_in_header and request_headers(ngx.ctx) or nil
  local query
  local key

  for i = 1, #key_names do
    local name = key_names[i]
    local v

    if headers then
      v = rawget(headers, name)
      if v == nil then
        v = rawget(headers, header_keys[i])
      end
    end

    if v == nil and conf.key_in_query then
      if not query then
        query = get_uri_args(MAX_ARGS)
      end
      v = query[name]
    end

    local tv = type(v)
    if tv == "string" then
      key = v

      if conf.hide_credentials then
        kong.service.request.clear_query_arg(name)
        kong.service.request.clear_header(name)
      end

      break

    elseif tv == "table" then
      return nil, 401, ERR_DUPLICATE_API_KEY, derived.www_authenticate
    end
    -- A valueless query argument (?apikey) reads as true: not a key, the next name is tried.
  end

  if not key or key == "" then
    return nil, 401, ERR_NO_API_KEY, derived.www_authenticate
  end

  -- an expired credential is no credential (entities.keyauth_credential)
  local credential = keyauth_credential(key)
  if not credential then
    return nil, 401, ERR_INVALID_AUTH_CRED, derived.www_authenticate
  end

  local consumer = consumer_by_id(credential.consumer.id)
  if not consumer then
    kong.log.err("consumer ", credential.consumer.id, " of key-auth credential ", credential.id, " not found")
    return nil, 500, ERR_UNEXPECTED
  end

  set_consumer(consumer, credential)

  return true
end


-- kong.client.load_consumer(anonymous, true): by id when it is a UUID, else (or when no consumer
-- has that id) by username.
local function load_anonymous_consumer(anonymous)
  return is_valid_uuid(anonymous) and consumer_by_id(anonymous) or consumer_by_username(anonymous)
end


local function set_anonymous_consumer(anonymous)
  local consumer = load_anonymous_consumer(anonymous)
  if not consumer then
    -- kong.client.authenticate(nil, nil) raises this in Kong: the request ends in a 500.
    return error("anonymous consumer " .. anonymous .. " is configured but doesn't exist")
  end

  set_consumer(consumer)
end


--- With conf.anonymous, authentication is a logical OR: with other auth plugins, any one
--- authenticating is enough, and a request none authenticates proceeds as the anonymous consumer.
local function logical_OR_authentication(conf)
  if kong.client.get_credential() then
    return
  end

  if not do_authentication(conf) then
    set_anonymous_consumer(conf.anonymous)
  end
end


--- Without conf.anonymous, a failure here fails the request whatever the other auth plugins did.
local function logical_AND_authentication(conf)
  local ok, status, message, www_authenticate = do_authentication(conf)
  if not ok then
    -- A new table each time: kong.response.error adds the negotiated Content-Type to it.
    return kong.response.error(status, message, www_authenticate and { ["WWW-Authenticate"] = www_authenticate })
  end
end


function KeyAuthHandler:access(conf)
  if not conf.run_on_preflight and get_method() == "OPTIONS" then
    return
  end

  if conf.anonymous then
    return logical_OR_authentication(conf)
  end

  return logical_AND_authentication(conf)
end


return KeyAuthHandler
