-- kong.plugins.acl.groups with Kong 3.9's module API (kong/plugins/acl/groups.lua): the groups a
-- consumer is in, read through kong.db.acls and kong.cache as Kong reads them, and the groups an
-- authentication plugin put in kong.ctx.shared.authenticated_groups. Other plugins require it
-- (the product's edge plugin does, in its access phase), whether or not acl runs on the route.
--
--   groups.get_current_consumer_id()           -> consumer id | nil
--   groups.get_consumer_groups(consumer_id)    -> { "a", "b", a = "a", b = "b" } | nil (none), or nil, err
--   groups.consumer_in_groups(groups_to_check, consumer_groups) -> boolean
--   groups.get_authenticated_groups()          -> { "a", a = "a" } | nil
--   groups.group_in_groups(groups_to_check, groups) -> true | nil
--   groups.warmup_groups_cache(consumer_id)    -> nil, or nil, err
--
-- A consumer's rows come from the snapshot this worker runs (kong.db.acls:each_for_consumer),
-- kept by kong.cache until the worker installs a new one, as Kong keeps them until a change of
-- the configuration; the derived tables are memoised by the identity of the kept rows (weak keys),
-- as Kong's are, so a request of a known consumer builds nothing.
local kong = kong
local ngx = ngx
local type = type
local setmetatable = setmetatable


local EMPTY = setmetatable({}, { __newindex = function() error("EMPTY is read-only", 2) end })

local weak_keys = { __mode = "k" }
-- raw rows (per snapshot and consumer) -> the groups list/set built from them
local consumer_groups_cache = setmetatable({}, weak_keys)
-- groups_to_check -> { [consumer_groups] = boolean }
local consumer_in_groups_cache = setmetatable({}, weak_keys)


local function load_groups_into_memory(consumer_pk)
  local rows
  local n = 0
  for row, err in kong.db.acls:each_for_consumer(consumer_pk) do
    if err then
      return nil, err
    end
    n = n + 1
    rows = rows or {}
    rows[n] = row
  end
  return rows or EMPTY
end


local function get_consumer_groups_raw(consumer_id)
  local cache_key = kong.db.acls:cache_key(consumer_id)
  local rows, err = kong.cache:get(cache_key, nil, load_groups_into_memory, { id = consumer_id })
  if err then
    return nil, err
  end
  if rows and #rows > 0 then
    return rows
  end
  return EMPTY
end


local function get_consumer_groups(consumer_id)
  local rows, err = get_consumer_groups_raw(consumer_id)
  if not rows then
    return nil, err
  end
  if rows == EMPTY then
    return nil
  end

  local groups = consumer_groups_cache[rows]
  if not groups then
    groups = {}
    for i = 1, #rows do
      local group = rows[i].group
      groups[i] = group
      groups[group] = group
    end
    consumer_groups_cache[rows] = groups
  end
  return groups
end


local function consumer_in_groups(groups_to_check, consumer_groups)
  local by_consumer = consumer_in_groups_cache[groups_to_check]
  if not by_consumer then
    by_consumer = setmetatable({}, weak_keys)
    consumer_in_groups_cache[groups_to_check] = by_consumer
  end

  local found = by_consumer[consumer_groups]
  if found ~= nil then
    return found
  end

  found = false
  for i = 1, #groups_to_check do
    if consumer_groups[groups_to_check[i]] then
      found = true
      break
    end
  end
  by_consumer[consumer_groups] = found
  return found
end


local function get_current_consumer_id()
  return (kong.client.get_consumer() or EMPTY).id
      or (kong.client.get_credential() or EMPTY).consumer_id
end


local function get_authenticated_groups()
  local authenticated = kong.ctx.shared.authenticated_groups
  if type(authenticated) ~= "table" then
    authenticated = ngx.ctx.authenticated_groups
    if authenticated == nil then
      return nil
    end
    if type(authenticated) ~= "table" then
      kong.log.warn("invalid authenticated_groups, a table was expected")
      return nil
    end
  end

  local groups = {}
  for i = 1, #authenticated do
    local group = authenticated[i]
    groups[i] = group
    groups[group] = group
  end
  return groups
end


-- true when one of groups_to_check is in groups; nil (not false) otherwise, as Kong's returns:
-- the handler's deny branch tells the two apart.
local function group_in_groups(groups_to_check, groups)
  for i = 1, #groups_to_check do
    if groups[groups_to_check[i]] then
      return true
    end
  end
end


local function warmup_groups_cache(consumer_id)
  local _, err = kong.cache:get(kong.db.acls:cache_key(consumer_id), nil, load_groups_into_memory,
                                { id = consumer_id })
  if err then
    return nil, err
  end
end


return {
  get_current_consumer_id = get_current_consumer_id,
  get_consumer_groups = get_consumer_groups,
  get_authenticated_groups = get_authenticated_groups,
  consumer_in_groups = consumer_in_groups,
  group_in_groups = group_in_groups,
  warmup_groups_cache = warmup_groups_cache,
}
