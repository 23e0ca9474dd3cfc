-- kong/meta.lua (3.9.3): the release this data plane reproduces.
local version = "3.9.3"

return {
  _NAME = "kong",
  _VERSION = version,
  version = version,
  _SERVER_TOKENS = "kong/" .. version,
}
