-- resty.sha256 and resty.string (the data plane's own, gateway/local/data-plane/lua/resty/), inside
-- nginx as the edge plugin runs them: libcrypto's symbols come from the nginx process. Known
-- answers from FIPS 180-4's examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
local sha256 = require "resty.sha256"
local to_hex = require("resty.string").to_hex

local function hex_sha256(...)
  local h = assert(sha256:new())
  for i = 1, select("#", ...) do
    assert.is_true(h:update((select(i, ...))))
  end
  return to_hex(h:final())
end

describe("resty.sha256", function()
  it("hashes the empty message", function()
    assert.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex_sha256(""))
  end)

  it('hashes "abc" (one block)', function()
    assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex_sha256("abc"))
  end)

  it("hashes the 448-bit message (the padding needs a second block)", function()
    assert.equal("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
                 hex_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
  end)

  it("hashes the 896-bit message", function()
    assert.equal("cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
                 hex_sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"))
  end)

  it("hashes a million 'a's, in one update and in 1000 updates", function()
    local expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    assert.equal(expected, hex_sha256(string.rep("a", 1000000)))
    local h = assert(sha256:new())
    local chunk = string.rep("a", 1000)
    for _ = 1, 1000 do
      h:update(chunk)
    end
    assert.equal(expected, to_hex(h:final()))
  end)

  it("update(s, len) hashes the first len bytes; a len past the string is refused", function()
    local h = assert(sha256:new())
    h:update("abcdef", 3)
    assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", to_hex(h:final()))
    assert.has_error(function() h:update("abc", 4) end, "len must be between 0 and #s")
  end)

  it("reset() starts over with the same context; contexts are independent", function()
    local a, b = assert(sha256:new()), assert(sha256:new())
    a:update("garbage")
    b:update("ab")
    assert.is_true(a:reset())
    a:update("abc")
    b:update("c")
    assert.equal(to_hex(a:final()), to_hex(b:final()))
  end)

  it("final() returns 32 bytes, a new string each time", function()
    local h = assert(sha256:new())
    local first = h:final()
    h:reset()
    h:update("abc")
    local second = h:final()
    assert.equal(32, #first)
    assert.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", to_hex(first))
    assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", to_hex(second))
  end)
end)

describe("resty.string", function()
  it("to_hex() writes every byte as two lower-case hexadecimal digits", function()
    local bytes = {}
    local expected = {}
    for b = 0, 255 do
      bytes[#bytes + 1] = string.char(b)
      expected[#expected + 1] = string.format("%02x", b)
    end
    assert.equal(table.concat(expected), to_hex(table.concat(bytes)))
    assert.equal("", to_hex(""))
  end)

  it("atoi() reads a decimal string", function()
    assert.equal(42, require("resty.string").atoi("42"))
    assert.is_nil(require("resty.string").atoi("4x"))
  end)
end)
