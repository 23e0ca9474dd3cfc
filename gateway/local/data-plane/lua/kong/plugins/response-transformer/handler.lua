-- response-transformer with Kong 3.9's behaviour (kong/plugins/response-transformer/handler.lua):
-- response headers in header_filter, top-level fields of a JSON body in body_filter.
local body_transformer = require "kong.plugins.response-transformer.body_transformer"
local header_transformer = require "kong.plugins.response-transformer.header_transformer"
local kong_meta = require "kong.meta"


local kong = kong
local transform_headers = header_transformer.transform_headers
local transform_json_body = body_transformer.transform_json_body
local transforms_body = header_transformer.transforms_body
local is_json_body = header_transformer.is_json_body


local ResponseTransformerHandler = {
  PRIORITY = 800,
  VERSION = kong_meta.version,
}


function ResponseTransformerHandler:header_filter(conf)
  transform_headers(conf, kong.response.get_headers())
end


function ResponseTransformerHandler:body_filter(conf)
  if not transforms_body(conf)
    or not is_json_body(kong.response.get_header("Content-Type"))
  then
    return
  end

  -- nil until the last chunk: kong.response.get_raw_body() buffers the body until then
  local body = kong.response.get_raw_body()

  local json_body, err = transform_json_body(conf, body)
  if err then
    kong.log.warn("body transform failed: " .. err)
    return
  end
  return kong.response.set_raw_body(json_body)
end


return ResponseTransformerHandler
