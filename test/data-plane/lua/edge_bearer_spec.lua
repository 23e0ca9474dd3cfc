-- The edge plugin's bearer token (gateway/plugins/animal-store-edge/api_key.lua) inside nginx:
-- the ngx.re.find form the node runs gives what the string.find form the unit cases run under the
-- luajit command gives (test/lua/edge_cases.lua holds the behaviour's own cases).
-- the repository: lua-specs.ts puts this directory on the package path
local repo = assert(package.path:match("([^;]*)/test/data%-plane/lua/%?%.lua"))
local api_key = assert(loadfile(repo .. "/gateway/plugins/animal-store-edge/api_key.lua"))()

local bearer_token = api_key.bearer_token
local by_pattern = api_key.bearer_token_by_pattern

local KEY = "ask_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8M6jqiQ"
local B64TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"

describe("edge plugin bearer_token", function()
  it("reads RFC 6750's form: scheme in any case, blanks around, a b64token then any '='", function()
    assert.equal(KEY, bearer_token("Bearer " .. KEY))
    assert.equal(KEY, bearer_token("bEaReR " .. KEY))
    assert.equal(KEY, bearer_token(" \t Bearer \t " .. KEY .. " \r\n"))
    assert.equal("abc==", bearer_token("Bearer abc=="))
    assert.equal(B64TOKEN, bearer_token("Bearer " .. B64TOKEN))
    assert.equal("a", bearer_token("Bearer\va\f"))
  end)

  it("is nil for any other form", function()
    for _, value in ipairs({ "", "Bearer", "Bearer ", "Bearerabc", "Bearer a b", "Bearer a=b", "Bearer =",
                             "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Token abc", "Bearer ab!c", "Bearer abc\0",
                             "Bearer \133abc", "Bearer abc\133", "Bearer \195\169", "Bearer abc\n\0" }) do
      assert.is_nil(bearer_token(value), value)
    end
    assert.is_nil(bearer_token(nil))
  end)

  it("gives what the luajit command's form gives, for random headers", function()
    local pieces = { " ", "\t", "\n", "\v", "\f", "\r", "\133", "\0", "Bearer", "bearer", "BEARER", "a", "Z",
                     "9", "-", ".", "_", "~", "+", "/", "=", "!", ",", "\195\169", KEY }
    math.randomseed(33)
    for _ = 1, 5000 do
      local parts = {}
      if math.random() < 0.7 then parts[1] = "Bearer " end
      for i = #parts + 1, math.random(1, 8) do
        parts[i] = pieces[math.random(#pieces)]
      end
      local value = table.concat(parts)
      assert.equal(by_pattern(value), bearer_token(value), value)
    end
  end)
end)
