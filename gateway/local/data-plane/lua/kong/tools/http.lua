-- The HTTP helpers of kong/tools/http.lua (3.9.3) the data plane uses: content negotiation for
-- Kong's own error bodies, their templates, and the request header reader of the runloop.
local re_match = ngx.re.match
local var = ngx.var
local get_headers = ngx.req.get_headers
local type = type
local tonumber = tonumber
local find = string.find
local sub = string.sub
local lower = string.lower
local gsub = string.gsub
local concat = table.concat

local CONTENT_TYPE_DEFAULT = "application/json; charset=utf-8"

local MIME_TYPES = {
  ["application/grpc"] = "",
  ["text/html"] = "text/html; charset=utf-8",
  ["application/json"] = CONTENT_TYPE_DEFAULT,
  ["text/plain"] = "text/plain; charset=utf-8",
  ["application/xml"] = "application/xml; charset=utf-8",
  ["application"] = CONTENT_TYPE_DEFAULT,
  ["text"] = "text/plain; charset=utf-8",
}

local ERROR_TEMPLATES = {
  ["text/html; charset=utf-8"] = [[
<!doctype html>
<html>
  <head>
    <meta charset="utf-8">
    <title>Error</title>
  </head>
  <body>
    <h1>Error</h1>
    <p>%s.</p>
    <p>request_id: %s</p>
  </body>
</html>
]],
  [CONTENT_TYPE_DEFAULT] = [[
{
  "message":"%s",
  "request_id":"%s"
}]],
  ["text/plain; charset=utf-8"] = "%s\nrequest_id: %s\n",
  ["application/xml; charset=utf-8"] = [[
<?xml version="1.0" encoding="UTF-8"?>
<error>
  <message>%s</message>
  <requestid>%s</requestid>
</error>
]],
  [""] = "",
}
-- the templates also answer to the bare media types
ERROR_TEMPLATES["text/html"] = ERROR_TEMPLATES["text/html; charset=utf-8"]
ERROR_TEMPLATES["application/json"] = ERROR_TEMPLATES[CONTENT_TYPE_DEFAULT]
ERROR_TEMPLATES["text/plain"] = ERROR_TEMPLATES["text/plain; charset=utf-8"]
ERROR_TEMPLATES["application/xml"] = ERROR_TEMPLATES["application/xml; charset=utf-8"]
ERROR_TEMPLATES["application/grpc"] = ""

local http = {}

local function strip(s)
  return (gsub(s, "^%s+", ""):gsub("%s+$", ""))
end

--- The response MIME type for a media range (`type/subtype; params`); the default for unknown ones.
function http.get_mime_type(content_header, use_default)
  if use_default == nil then
    use_default = true
  end
  local media = strip(content_header)
  local semicolon = find(media, ";", 1, true)
  if semicolon then
    media = sub(media, 1, semicolon - 1)
  end

  local mime_type
  local slash = find(media, "/", 1, true)
  if slash then
    local main, subtype = sub(media, 1, slash - 1), sub(media, slash + 1)
    if subtype == "*" then
      mime_type = main == "*" and CONTENT_TYPE_DEFAULT or MIME_TYPES[main]
    else
      mime_type = MIME_TYPES[media]
    end
  end

  if mime_type or use_default then
    return mime_type or CONTENT_TYPE_DEFAULT
  end
  return nil, "could not find MIME type"
end

-- a media range with an optional q parameter among its parameters (kong/tools/http.lua)
local ACCEPT_VALUE = [[
  ((?:[a-z0-9][a-z0-9-!#$&^_+.]+|\*) \/ (?:[a-z0-9][a-z0-9-!#$&^_+.]+|\*))
  (?:
    \s*;\s*
    q = ( 1(?:\.0{0,3}|) | 0(?:\.\d{0,3}|) )
    | \s*;\s* [a-z0-9][a-z0-9-!#$&^_+.]+ (?:=[^;]*|)
  )*
]]

--- The Content-Type of Kong's error response for an Accept header: the acceptable type of
-- highest quality among those Kong has a template for (the first on ties), JSON otherwise.
function http.get_response_type(accept_header)
  local content_type = CONTENT_TYPE_DEFAULT
  if type(accept_header) == "table" then
    accept_header = concat(accept_header, ",")
  end
  if accept_header == nil then
    return content_type
  end

  local max_quality = 0
  local from = 1
  while true do
    local comma = find(accept_header, ",", from, true)
    local value = strip(sub(accept_header, from, comma and comma - 1 or nil))
    local m = re_match(value, ACCEPT_VALUE, "ajoxi")
    if m then
      local q = tonumber(m[2]) or 1
      if q > max_quality then
        max_quality = q
        content_type = http.get_mime_type(m[1]) or content_type
      end
    end
    if not comma then
      break
    end
    from = comma + 1
  end

  return content_type
end

function http.get_error_template(mime_type)
  local template = ERROR_TEMPLATES[mime_type]
  if template then
    return template
  end
  return nil, "no template found for MIME type " .. (mime_type or "empty")
end

local dashes_to_underscores = require("kong.tools.memo")(function(name)
  return "http_" .. gsub(lower(name), "-", "_")
end)

--- A request header's first value (kong/tools/http.lua get_header). With ctx, from the headers
-- table cached in it; otherwise from $http_<name>, falling back to all headers when nginx joined
-- several into one value.
function http.get_header(name, ctx)
  local headers
  if ctx then
    headers = ctx.cached_request_headers
    if not headers then
      headers = get_headers()
      ctx.cached_request_headers = headers
    end
  else
    local value = var[dashes_to_underscores[name]]
    if not value or not find(value, ", ", 1, true) then
      return value
    end
    headers = get_headers()
  end

  local value = headers[name]
  if type(value) == "table" then
    return value[1]
  end
  return value
end

--- kong/tools/http.lua check_https: is the request HTTPS (or terminated as HTTPS before Kong
-- when allow_terminated and the client is trusted)?
function http.check_https(trusted_ip, allow_terminated)
  if var.scheme:lower() == "https" then
    return true
  end

  if not allow_terminated then
    return false
  end

  if not trusted_ip then
    return false
  end

  local forwarded_proto = get_headers()["x-forwarded-proto"]
  if forwarded_proto == nil then
    return false
  end
  if type(forwarded_proto) == "table" then
    return nil, "Only one X-Forwarded-Proto header allowed"
  end
  return lower(forwarded_proto) == "https"
end

return http
