-- kong.runloop.entities: the entities of the snapshot this worker runs, indexed for lookups on
-- the request path. Kong's plugins reach them through kong.db and kong.cache; here bundled plugins
-- (key-auth) ask this module, and kong.db's subset (kong/db/init.lua) reads it for custom ones.
--
-- Interface (stable; bundled plugins depend on it):
--
--   entities.keyauth_credential(key)    -> credential | nil
--       { id = <uuid>, consumer = { id = <uuid> }, key = <string>, tags = <strings|nil>,
--         expires_at = <number|nil> }
--       nil when no credential has this key, or when it has expired (expires_at <= ngx.now(),
--       the test clock's when it runs): Kong's row TTL makes such a row disappear.
--   entities.consumer(id)               -> consumer | nil   { id, username, custom_id }
--   entities.acls_for_consumer(id)      -> acls | nil
--       the consumer's ACLs, { { id, consumer = { id }, group, tags }, ... } in the snapshot's
--       order; nil when it has none.
--   entities.consumer_by_username(name) -> consumer | nil
--   entities.consumer_by_custom_id(cid) -> consumer | nil
--   entities.config_hash()              -> the running snapshot's config_hash ("" before any)
--   entities.generation()               -> a number that changes with each index installed
--       (kong.cache keeps its values until it does)
--
-- Fields that are null in the snapshot are nil here, as Kong's DAO returns them. The tables
-- returned belong to the runtime: callers must not modify them. Lookups never yield.
--
-- Internal (kong.clustering): entities.build(snapshot) -> index, entities.install(index).

local type = type
local ngx = ngx

local EMPTY = {}

-- counts the indexes installed in this worker
local installed = 0

local index = {
  hash = "",
  credentials_by_key = EMPTY,
  consumers_by_id = EMPTY,
  consumers_by_username = EMPTY,
  consumers_by_custom_id = EMPTY,
  acls_by_consumer = EMPTY,
}

local entities = {}


function entities.keyauth_credential(key)
  if type(key) ~= "string" then
    return nil
  end

  local credential = index.credentials_by_key[key]
  if not credential then
    return nil
  end

  local expires_at = credential.expires_at
  -- ngx.now at call time: the test clock patches it
  if expires_at and expires_at <= ngx.now() then
    return nil
  end

  return credential
end


function entities.consumer(id)
  return index.consumers_by_id[id]
end


function entities.acls_for_consumer(consumer_id)
  return index.acls_by_consumer[consumer_id]
end


function entities.consumer_by_username(username)
  return index.consumers_by_username[username]
end


function entities.consumer_by_custom_id(custom_id)
  return index.consumers_by_custom_id[custom_id]
end


function entities.config_hash()
  return index.hash
end


--- Indexes a checked snapshot (nulls already removed). Duplicate keys cannot occur: the control
-- plane's unique constraints hold for every snapshot it compiles.
function entities.build(snapshot)
  local consumers_by_id, consumers_by_username, consumers_by_custom_id = {}, {}, {}
  for _, consumer in ipairs(snapshot.consumers) do
    consumers_by_id[consumer.id] = consumer
    if consumer.username then
      consumers_by_username[consumer.username] = consumer
    end
    if consumer.custom_id then
      consumers_by_custom_id[consumer.custom_id] = consumer
    end
  end

  local credentials_by_key = {}
  for _, credential in ipairs(snapshot.keyauth_credentials) do
    credentials_by_key[credential.key] = credential
  end

  local acls_by_consumer = {}
  for _, acl in ipairs(snapshot.acls) do
    local consumer_id = acl.consumer.id
    local acls = acls_by_consumer[consumer_id]
    if not acls then
      acls = {}
      acls_by_consumer[consumer_id] = acls
    end
    acls[#acls + 1] = acl
  end

  return {
    hash = snapshot.config_hash,
    credentials_by_key = credentials_by_key,
    consumers_by_id = consumers_by_id,
    consumers_by_username = consumers_by_username,
    consumers_by_custom_id = consumers_by_custom_id,
    acls_by_consumer = acls_by_consumer,
  }
end


function entities.generation()
  return installed
end


function entities.install(new_index)
  index = new_index
  installed = installed + 1
end


return entities
