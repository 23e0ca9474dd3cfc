-- kong.db and kong.cache on the data plane (kong/db/init.lua, kong/cache.lua): the subset a custom
-- plugin calls (the edge plugin's accept_plaintext_keys), read from the snapshot's entity index as
-- Kong's DAO (off strategy) and kong.cache answer.
local cjson = require "cjson.safe"
local snapshot = require "kong.clustering.snapshot"
local entities = require "kong.runloop.entities"

local CONSUMER_ID = "44444444-4444-4444-8444-444444444444"

local function doc(now)
  return {
    snapshot_version = 2,
    config_version = 1,
    config_hash = string.rep("cd", 16),
    certificates = {},
    snis = {},
    services = {},
    routes = {},
    consumers = { { id = CONSUMER_ID, username = "alice", custom_id = cjson.null } },
    keyauth_credentials = {
      { id = "55555555-5555-4555-8555-555555555555", consumer = { id = CONSUMER_ID }, key = "hashed",
        tags = { "petstore-consumer", "key-hash:sha256" }, expires_at = cjson.null },
      { id = "66666666-6666-4666-8666-666666666666", consumer = { id = CONSUMER_ID }, key = "expiring",
        tags = cjson.null, expires_at = now + 90.5 },
      { id = "77777777-7777-4777-8777-777777777777", consumer = { id = CONSUMER_ID }, key = "expired",
        tags = cjson.null, expires_at = now - 1 },
    },
    acls = {
      { id = "88888888-8888-4888-8888-888888888888", consumer = { id = CONSUMER_ID }, group = "animal-store",
        tags = cjson.null },
      { id = "99999999-9999-4999-8999-999999999999", consumer = { id = CONSUMER_ID }, group = "admin",
        tags = { "t" } },
    },
    plugins = {},
  }
end

describe("kong.db on the data plane", function()
  local db, previous
  setup(function()
    previous = entities.config_hash()
    local s = assert(snapshot.decode(cjson.encode(doc(ngx.now()))))
    entities.install(entities.build(s))
    db = require("kong.db").new()
  end)
  teardown(function()
    entities.install(entities.build({ config_hash = previous, consumers = {}, keyauth_credentials = {}, acls = {} }))
  end)

  it("keyauth_credentials:select_by_key returns a copy of the row with its tags", function()
    local credential = db.keyauth_credentials:select_by_key("hashed")
    assert.same({
      id = "55555555-5555-4555-8555-555555555555",
      consumer = { id = CONSUMER_ID },
      key = "hashed",
      tags = { "petstore-consumer", "key-hash:sha256" },
    }, credential)
    credential.key = "changed"
    assert.equal("hashed", db.keyauth_credentials:select_by_key("hashed").key)
  end)

  it("gives a credential with a ttl the whole seconds it has left; an expired one is none", function()
    assert.equal(91, db.keyauth_credentials:select_by_key("expiring").ttl)
    assert.is_nil(db.keyauth_credentials:select_by_key("expired"))
    assert.is_nil(db.keyauth_credentials:select_by_key("nobody"))
  end)

  it("refuses a key that is not a string, as Kong's DAO does", function()
    assert.has_error(function() db.keyauth_credentials:select_by_key(nil) end, "key must be a string")
  end)

  it("keyauth_credentials:cache_key is Kong's fast-path key", function()
    assert.equal("keyauth_credentials:abc:::::", db.keyauth_credentials:cache_key("abc"))
  end)

  it("acls:each_for_consumer iterates copies of the consumer's rows (kong/plugins/acl/groups.lua reads them)", function()
    local groups = {}
    for row, err in db.acls:each_for_consumer({ id = CONSUMER_ID }) do
      assert.is_nil(err)
      groups[#groups + 1] = row.group
      assert.same({ id = CONSUMER_ID }, row.consumer)
      row.group = "changed"
    end
    assert.same({ "animal-store", "admin" }, groups)
    assert.equal("animal-store", db.acls:each_for_consumer({ id = CONSUMER_ID })().group)
    assert.is_nil(db.acls:each_for_consumer({ id = "00000000-0000-4000-8000-000000000000" })())
  end)

  it("acls:cache_key is Kong's fast-path key of the consumer (and group)", function()
    assert.equal("acls:" .. CONSUMER_ID .. ":::::", db.acls:cache_key(CONSUMER_ID))
    assert.equal("acls:" .. CONSUMER_ID .. ":admin::::", db.acls:cache_key(CONSUMER_ID, "admin"))
  end)
end)

describe("kong.cache on the data plane", function()
  local cache = require("kong.cache").new()

  local function counting(value, ttl)
    local calls = 0
    return function()
      calls = calls + 1
      return value, nil, ttl
    end, function() return calls end
  end

  local function install_new_snapshot()
    entities.install(entities.build({ config_hash = entities.config_hash(), consumers = {}, keyauth_credentials = {}, acls = {} }))
  end

  it("get() runs the callback with its arguments: its value, hit level 3", function()
    local value, err, hit_level = cache:get("sum", nil, function(a, b) return a + b end, 1, 2)
    assert.equal(3, value)
    assert.is_nil(err)
    assert.equal(3, hit_level)
  end)

  it("get() keeps the value until a new snapshot: hit level 1, the callback not run", function()
    local rows = {}
    local callback, calls = counting(rows)
    assert.same({ rows, nil, 3 }, { cache:get("kept", nil, callback) })
    local value, err, hit_level = cache:get("kept", nil, callback)
    assert.equal(rows, value)
    assert.is_nil(err)
    assert.equal(1, hit_level)
    assert.equal(1, calls())
    install_new_snapshot()
    assert.same({ rows, nil, 3 }, { cache:get("kept", nil, callback) })
    assert.equal(2, calls())
  end)

  -- Kong caches misses too (kong/cache/init.lua neg_ttl; db_cache_neg_ttl unset: until invalidated)
  it("get() keeps a miss until a new snapshot", function()
    local callback, calls = counting(nil)
    assert.same({ nil, nil, 3 }, { cache:get("miss", nil, callback) })
    assert.same({ nil, nil, 1 }, { cache:get("miss", nil, callback) })
    assert.equal(1, calls())
  end)

  it("get() does not keep a value its callback returned with a ttl", function()
    local callback, calls = counting("expiring", 90)
    assert.same({ "expiring", nil, 3 }, { cache:get("ttl", nil, callback) })
    assert.same({ "expiring", nil, 3 }, { cache:get("ttl", nil, callback) })
    assert.equal(2, calls())
  end)

  it("get() returns the callback's error, or what it threw, and keeps neither", function()
    assert.same({ nil, "down" }, { cache:get("k", nil, function() return nil, "down" end) })
    local value, err = cache:get("k", nil, function() error("boom", 0) end)
    assert.is_nil(value)
    assert.equal("callback threw an error: boom", err)
    assert.same({ "up", nil, 3 }, { cache:get("k", nil, function() return "up" end) })
  end)

  it("get() keeps at most 10000 values: past them it starts over", function()
    local fresh = require("kong.cache").new()
    local first, first_calls = counting("first")
    fresh:get("first", nil, first)
    for i = 1, 9999 do
      fresh:get("key " .. i, nil, function() return i end)
    end
    fresh:get("first", nil, first)
    assert.equal(1, first_calls())
    fresh:get("one more", nil, function() return true end)
    fresh:get("first", nil, first)
    assert.equal(2, first_calls())
  end)

  it("get() refuses a key that is not a string", function()
    assert.has_error(function() cache:get(1, nil, function() end) end, "key must be a string")
  end)
end)

describe("the snapshot's credentials", function()
  it("must carry tags (an array of strings, or null)", function()
    local d = doc(0)
    d.keyauth_credentials[1].tags = nil
    assert.matches('field "tags" is missing', snapshot.check(d), 1, true)
    d.keyauth_credentials[1].tags = "key-hash:sha256"
    assert.matches('field "tags" must be', snapshot.check(d), 1, true)
  end)
end)
