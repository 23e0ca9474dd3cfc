-- A small JSON codec with lua-cjson's interface (encode, decode, null, empty_array_mt), for the
-- Lua hosts that have no cjson: the local gateway's VM and the LuaJIT test harness.
-- Production Kong ships lua-cjson itself; this module is never loaded there.
local json = {}

json.null = setmetatable({}, { __tostring = function() return "null" end })
json.empty_array_mt = { __name = "empty_array" }
json.array_mt = { __name = "array" }

local escapes = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

local function escape_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function is_array(t)
  local mt = getmetatable(t)
  if mt == json.empty_array_mt or mt == json.array_mt then return true end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" or k <= 0 or k % 1 ~= 0 then return false end
    n = n + 1
  end
  for i = 1, n do
    if t[i] == nil then return false end
  end
  return n > 0
end

local encode_value

local function encode_number(n)
  if n ~= n or n == math.huge or n == -math.huge then
    error("cannot encode a non-finite number")
  end
  if n % 1 == 0 and n >= -2^53 and n <= 2^53 then
    return string.format("%d", n)
  end
  return string.format("%.14g", n)
end

encode_value = function(v, depth)
  local t = type(v)
  if v == nil or v == json.null then return "null" end
  if t == "boolean" then return v and "true" or "false" end
  if t == "number" then return encode_number(v) end
  if t == "string" then return escape_string(v) end
  if t ~= "table" then error("cannot encode a " .. t) end
  if depth > 100 then error("excessive nesting") end
  local parts = {}
  if is_array(v) then
    for i = 1, #v do parts[i] = encode_value(v[i], depth + 1) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do
    if type(k) ~= "string" then error("cannot encode a table with non-string keys") end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = escape_string(k) .. ":" .. encode_value(v[k], depth + 1) end
  return "{" .. table.concat(parts, ",") .. "}"
end

function json.encode(v)
  return encode_value(v, 0)
end

local function decode_error(s, i, what)
  error(string.format("Expected %s at character %d", what, i))
end

local decode_value

local function skip(s, i)
  return s:find("[^ \t\r\n]", i) or #s + 1
end

local function decode_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == "" then decode_error(s, j, "closing quote") end
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
      if map[e] then
        out[#out + 1] = map[e]
        j = j + 2
      elseif e == "u" then
        local code = tonumber(s:sub(j + 2, j + 5), 16)
        if not code then decode_error(s, j, "hex escape") end
        if code < 0x80 then
          out[#out + 1] = string.char(code)
        elseif code < 0x800 then
          out[#out + 1] = string.char(0xC0 + math.floor(code / 64), 0x80 + code % 64)
        else
          out[#out + 1] = string.char(0xE0 + math.floor(code / 4096), 0x80 + math.floor(code / 64) % 64, 0x80 + code % 64)
        end
        j = j + 6
      else
        decode_error(s, j, "escape")
      end
    else
      out[#out + 1] = c
      j = j + 1
    end
  end
end

decode_value = function(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return t, i + 1 end
    while true do
      if s:sub(i, i) ~= '"' then decode_error(s, i, "string key") end
      local k
      k, i = decode_string(s, i)
      i = skip(s, i)
      if s:sub(i, i) ~= ":" then decode_error(s, i, "':'") end
      t[k], i = decode_value(s, i + 1)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "}" then return t, i + 1 end
      if d ~= "," then decode_error(s, i, "',' or '}'") end
      i = skip(s, i + 1)
    end
  elseif c == "[" then
    local t = setmetatable({}, json.array_mt)
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return t, i + 1 end
    while true do
      t[#t + 1], i = decode_value(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "]" then return t, i + 1 end
      if d ~= "," then decode_error(s, i, "',' or ']'") end
      i = i + 1
    end
  elseif c == '"' then
    return decode_string(s, i)
  elseif s:find("^true", i) then
    return true, i + 4
  elseif s:find("^false", i) then
    return false, i + 5
  elseif s:find("^null", i) then
    return json.null, i + 4
  end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  if not num or num == "" then decode_error(s, i, "value") end
  return tonumber(num), i + #num
end

function json.decode(s)
  if type(s) ~= "string" then error("expected a string") end
  local value, i = decode_value(s, 1)
  if skip(s, i) <= #s then decode_error(s, i, "end of input") end
  return value
end

-- cjson.safe: errors become nil, message
json.safe = {
  null = json.null,
  empty_array_mt = json.empty_array_mt,
  array_mt = json.array_mt,
  encode = function(v)
    local ok, result = pcall(json.encode, v)
    if ok then return result end
    return nil, result
  end,
  decode = function(s)
    local ok, result = pcall(json.decode, s)
    if ok then return result end
    return nil, result
  end,
}

return json
