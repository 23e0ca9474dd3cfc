-- Path handling of kong/tools/uri.lua (3.9.3): normalize (RFC 3986 5.2.4 dot-segment removal,
-- percent-decoding of everything but reserved characters, optionally merging slashes) and
-- escape (percent-encode what may not appear in a request line).
local re_find = ngx.re.find
local re_gsub = ngx.re.gsub
local byte = string.byte
local char = string.char
local sub = string.sub
local find = string.find
local upper = string.upper
local format = string.format
local concat = table.concat
local tonumber = tonumber

local DOT = byte(".")
local SLASH = byte("/")

-- reserved characters stay encoded (upper-cased), all others are decoded
local RESERVED = {}
for c in ("!*'();:@&=+$,/?%#[]"):gmatch(".") do
  RESERVED[byte(c)] = true
end

local function decode_triplet(m)
  local code = tonumber(m[1], 16)
  if RESERVED[code] then
    return upper(m[0])
  end
  return char(code)
end

local segments = {}

local uri = {}

--- The path with unreserved escapes decoded and dot segments removed (and `//` merged when
-- merge_slashes), as Kong's router and kong.request.get_path see it.
function uri.normalize(path, merge_slashes)
  if path == "" or path == "/" then
    return path
  end

  if find(path, "%", 1, true) then
    path = re_gsub(path, [[%([\dA-F]{2})]], decode_triplet, "joi")
  end

  if not find(path, ".", 1, true) then
    if not merge_slashes or not find(path, "//", 1, true) then
      return path
    end
  end

  local n = 0
  while path ~= "" do
    local b1, b2, b3, b4 = byte(path, 1, 4)
    if path == "/." then
      path = "/"

    elseif path == "/.." then
      path = "/"
      if n > 0 then
        n = n - 1
      end

    elseif path == "." or path == ".." then
      path = ""

    elseif b1 == DOT and b2 == DOT and b3 == SLASH then
      path = sub(path, 4)

    elseif b1 == DOT and b2 == SLASH then
      path = sub(path, 3)

    elseif b1 == SLASH and b2 == DOT and b3 == SLASH then
      path = sub(path, 3)

    elseif b1 == SLASH and b2 == DOT and b3 == DOT and b4 == SLASH then
      path = sub(path, 4)
      if n > 0 then
        n = n - 1
      end

    elseif merge_slashes and b1 == SLASH and b2 == SLASH then
      path = sub(path, 2)

    else
      n = n + 1
      local i = find(path, "/", 2, true)
      if i then
        segments[n] = sub(path, 1, i - 1)
        path = sub(path, i)
      else
        segments[n] = path
        path = ""
      end
    end
  end

  if n == 0 then
    return ""
  end
  return concat(segments, nil, 1, n)
end


local UNSAFE = [=[[^!#$&'()*+,/:;=?@[\]A-Z\d\-_.~%]]=]

local function percent_encode(m)
  return format("%%%02X", byte(m[0]))
end

--- Percent-encodes every byte that is neither reserved, unreserved nor `%`. A path with none
-- (most) is returned as it is after one ngx.re.find, which LuaJIT compiles: a loop over its bytes
-- here cut the traces of the runloop's access that reach it ("inner loop in root trace").
function uri.escape(path)
  if not re_find(path, UNSAFE, "joi") then
    return path
  end
  local escaped = re_gsub(path, UNSAFE, percent_encode, "joi")
  return escaped
end

return uri
