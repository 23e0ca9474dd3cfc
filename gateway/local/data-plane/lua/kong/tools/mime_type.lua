-- kong.tools.mime_type, as Kong 3.9 has it (an LPeg grammar of RFC 2045 there, Lua patterns here):
-- parse_mime_type("application/json; charset=utf-8") is "application", "json",
-- { charset = "utf-8" }; anything the grammar does not accept is nil.
local lower = string.lower
local find = string.find
local match = string.match
local sub = string.sub
local type = type
local error = error


local WILDCARD = "*"

-- RFC 2045 token characters: printable ASCII but the tspecials and space.
local TOKEN = "[!#$%%&'*+%-.0-9A-Z^_`a-z|~]+"
local TYPES = "^(" .. TOKEN .. ")/(" .. TOKEN .. ")()"
local PARAMETER = "^[ \t]*;[ \t]*(" .. TOKEN .. ")=()"
local TOKEN_VALUE = "^(" .. TOKEN .. ")()"
-- Kong's grammar tries plain text before a quoted pair, so a backslash never escapes the quote.
local QUOTED_VALUE = '^"([^"%c]*)"()'


local function parse_mime_type(mime_type)
  local media_type, subtype, pos = match(mime_type, TYPES)
  if not media_type then
    if mime_type == WILDCARD then
      return WILDCARD, WILDCARD, {}
    end
    return nil
  end

  local params = {}
  local len = #mime_type
  while pos <= len do
    local attribute, value_pos = match(mime_type, PARAMETER, pos)
    if not attribute then
      return nil
    end
    local value, next_pos = match(mime_type, TOKEN_VALUE, value_pos)
    if not value then
      value, next_pos = match(mime_type, QUOTED_VALUE, value_pos)
      if not value then
        return nil
      end
    end
    params[lower(attribute)] = value
    pos = next_pos
  end

  return lower(media_type), lower(subtype), params
end


--- Whether the media type `this` ({ type, subtype }) includes `other`: */* everything, type/*
--- the type, and a subtype without a suffix the subtypes with it as suffix (json: problem+json).
local function includes(this, other)
  if type(this) ~= "table" then
    error("this must be a table", 2)
  end
  if type(other) ~= "table" then
    error("other must be a table", 2)
  end

  if this.type == WILDCARD then
    return true
  end

  if this.type == other.type then
    if this.subtype == other.subtype or this.subtype == WILDCARD then
      return true
    end

    if not find(this.subtype, "+", nil, true) then
      local suffix = "+" .. this.subtype
      if sub(other.subtype, -#suffix) == suffix then
        return true
      end
    end
  end

  return false
end


return {
  parse_mime_type = parse_mime_type,
  includes = includes,
}
