-- kong/pdk/private/checks.lua (3.9.3): what header values the PDK takes, and how they go out.
local type = type
local pairs = pairs
local ipairs = ipairs
local error = error
local tostring = tostring
local format = string.format

local checks = {}

--- A header value as ngx.header / ngx.req.set_header take it: "" becomes " " (nginx would drop
-- an empty header), numbers and booleans become strings, arrays are copied element-wise.
function checks.normalize_multi_header(value)
  local t = type(value)
  if t == "string" then
    return value == "" and " " or value
  end
  if t == "table" then
    local out = {}
    for i, v in ipairs(value) do
      out[i] = v == "" and " " or v
    end
    return out
  end
  return tostring(value)
end

function checks.normalize_header(value)
  if type(value) == "string" then
    return value == "" and " " or value
  end
  return tostring(value)
end

--- Errors (at the PDK caller's caller) unless value is a string, number, boolean or array of strings.
function checks.validate_header(name, value)
  local tname = type(name)
  if tname ~= "string" then
    error(format("invalid header name %q: got %s, expected string", name, tname), 3)
  end

  local t = type(value)
  if t == "string" then
    return value
  end
  if t == "table" then
    for _, v in ipairs(value) do
      local tv = type(v)
      if tv ~= "string" then
        error(format("invalid header value in array %q: got %s, expected string", name, tv), 3)
      end
    end
    return value
  end
  if t == "number" or t == "boolean" then
    return tostring(value)
  end
  error(format("invalid header value for %q: got %s, expected array of string, string, number or boolean",
               name, t), 3)
end

function checks.validate_headers(headers)
  if type(headers) ~= "table" then
    error("headers must be a table", 3)
  end

  for k, v in pairs(headers) do
    local tk = type(k)
    if tk ~= "string" then
      error(format("invalid header name %q: got %s, expected string", k, tk), 3)
    end

    local t = type(v)
    if t == "table" then
      for _, vv in ipairs(v) do
        local tvv = type(vv)
        if tvv ~= "string" then
          error(format("invalid header value in array %q: got %s, expected string", k, tvv), 3)
        end
      end
    elseif t ~= "string" and t ~= "number" and t ~= "boolean" then
      error(format("invalid header value for %q: got %s, expected string, number, boolean or array of strings",
                   k, t), 3)
    end
  end
end

return checks
