-- kong.db on a data-plane node: the subset of Kong's DAO (kong/db/dao/init.lua) that plugins may
-- call, over the entity index of the snapshot this worker runs (kong.runloop.entities). Kong's own
-- data planes read their LMDB copy here; this node has the snapshot. Only what a plugin of this
-- project calls exists; anything else is a nil field, and calling it fails loudly.
--
--   kong.db.keyauth_credentials:select_by_key(key) -> credential | nil
--       { id, consumer = { id }, key, tags, ttl }: a copy; ttl is the whole seconds left (nil
--       without one), and an expired credential is none, as Kong's off strategy returns them.
--   kong.db.keyauth_credentials:cache_key(key)     -> "keyauth_credentials:<key>:::::"
--   kong.db.acls:each_for_consumer({ id })         -> iterator of row, err
--       the consumer's ACL rows { id, consumer = { id }, group, tags }, each a copy.
--   kong.db.acls:cache_key(consumer_id)            -> "acls:<consumer_id>:::::"
local entities = require "kong.runloop.entities"

local ngx = ngx
local type = type
local error = error
local ceil = math.ceil
local fmt = string.format

local keyauth_credential = entities.keyauth_credential
local acls_for_consumer = entities.acls_for_consumer

local KeyauthCredentials = { name = "keyauth_credentials" }

function KeyauthCredentials:select_by_key(key)
  if type(key) ~= "string" then
    error("key must be a string", 2)
  end
  local credential = keyauth_credential(key)
  if not credential then
    return nil
  end
  local expires_at = credential.expires_at
  return {
    id = credential.id,
    consumer = { id = credential.consumer.id },
    key = credential.key,
    tags = credential.tags,
    ttl = expires_at and ceil(expires_at - ngx.now()) or nil,
  }
end

-- Kong's DAO:cache_key fast path for one string: the name, the key, four empty parts and the
-- workspace id (none on this node).
function KeyauthCredentials:cache_key(key)
  if type(key) ~= "string" then
    error("key must be a string", 2)
  end
  return fmt("%s:%s:::::", self.name, key)
end

local Acls = { name = "acls" }

-- Kong's generated DAO:each_for_consumer (kong/db/dao/init.lua generate_foreign_key_methods): the
-- rows whose consumer is the given primary key, one page of them at a time there, all here.
function Acls:each_for_consumer(foreign_key)
  if type(foreign_key) ~= "table" or type(foreign_key.id) ~= "string" then
    error("foreign_key must be a table with an id", 2)
  end
  local rows = acls_for_consumer(foreign_key.id)
  local i = 0
  return function()
    i = i + 1
    local acl = rows and rows[i]
    if not acl then
      return nil
    end
    return {
      id = acl.id,
      consumer = { id = acl.consumer.id },
      group = acl.group,
      tags = acl.tags,
    }
  end
end

function Acls:cache_key(consumer_id, group)
  if type(consumer_id) ~= "string" then
    error("key must be a string", 2)
  end
  return fmt("%s:%s:%s::::", self.name, consumer_id, group or "")
end

local db = {}

function db.new()
  return { keyauth_credentials = KeyauthCredentials, acls = Acls }
end

return db
