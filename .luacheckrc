-- luacheck (Debian's lua-check) for the custom Kong plugin and the local data plane's Lua:
-- `npm run lint`. Modelled on Kong 3.9.3's own .luacheckrc: OpenResty's standard library,
-- unused arguments and long lines allowed (Kong's phase handlers take (self, conf)).
std             = "ngx_lua"
unused_args     = false
redefined       = false
max_line_length = false

globals = {
    "kong",
}

not_globals = {
    "string.len",
    "table.getn",
}

ignore = {
    "6.", -- whitespace, as Kong's
}

-- The data plane (Lua on nginx + ngx_lua): Kong's own modules, which patch ngx (the test clock,
-- kong.tools.request_headers) and set the `kong` global in init.
files["gateway/local/data-plane/lua/**/*.lua"] = {
    globals = { "kong", "ngx.now", "ngx.time", "ngx.req.set_header", "ngx.req.clear_header" },
}

-- busted specs of the data plane, run inside nginx (test/data-plane/lua-specs.ts)
files["test/data-plane/lua/**/*_spec.lua"] = {
    std = "ngx_lua+busted",
    globals = { "ngx" },
}

-- The edge plugin's unit cases run under the luajit command with a PDK stub that plays ngx.
files["test/lua/*.lua"] = {
    globals = { "ngx" },
}
