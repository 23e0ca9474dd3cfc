-- A key's scopes (docs/api-keys.md, "Scopes"): the key-auth credential's `scope:<name>` tags, as
-- the provisioning CLI writes them. A credential without any scope tag may do everything.
--
-- What a request needs: GET, HEAD and OPTIONS on /v1/pets… need pets:read, any other method
-- pets:write; /v1/store/orders… the same with orders:read and orders:write; every other path
-- (the contract, /openapi.json and /openapi.yaml, and paths no operation has) needs no scope.
-- The path is Kong's normalized one (kong.request.get_path: what the router matched), compared
-- case-insensitively. The backend's paths are case-sensitive (/v1/PETS/1 is a 404 there), so this
-- only makes such a path, which no operation serves, need the scope as well: a key without it
-- gets 403 where it would get 404, and no operation is ever let through.
local lower = string.lower
local sub = string.sub
local find = string.find
local setmetatable = setmetatable

local SCOPE_TAG = "scope:"
local SCOPE_TAG_LENGTH = #SCOPE_TAG

local scopes = {
  -- the parsed set of a credential without scope tags: everything is allowed
  ALL = setmetatable({}, { __index = function() return true end }),
}

-- Parsed sets by credential table, weak-keyed. kong.cache (Kong) and the snapshot's index (the
-- local data plane) hand out the same table for a credential until it changes; a changed
-- credential (its tags PATCHed) is a new table, so no entry is ever stale, and an entry goes
-- with its table.
local parsed = setmetatable({}, { __mode = "k" })

local function parse(credential)
  local set
  local tags = credential.tags
  if tags then
    for i = 1, #tags do
      local tag = tags[i]
      if sub(tag, 1, SCOPE_TAG_LENGTH) == SCOPE_TAG then
        set = set or {}
        set[sub(tag, SCOPE_TAG_LENGTH + 1)] = true
      end
    end
  end
  set = set or scopes.ALL
  parsed[credential] = set
  return set
end

--- The credential's scopes as a set (`set[scope] == true`); scopes.ALL without any scope tag.
function scopes.of(credential)
  return parsed[credential] or parse(credential)
end

local READ_METHODS = { GET = true, HEAD = true, OPTIONS = true }

local RESOURCES = {
  { prefix = "/v1/pets", read = "pets:read", write = "pets:write" },
  { prefix = "/v1/store/orders", read = "orders:read", write = "orders:write" },
}
for _, resource in ipairs(RESOURCES) do
  resource.length = #resource.prefix
end

--- The scope a request needs, or nil when it needs none.
function scopes.required(method, path)
  -- the longest prefix is 16 bytes: only that much is lowered
  local head = lower(sub(path, 1, 16))
  for i = 1, #RESOURCES do
    local resource = RESOURCES[i]
    if find(head, resource.prefix, 1, true) == 1 then
      return READ_METHODS[method] and resource.read or resource.write
    end
  end
  return nil
end

return scopes
