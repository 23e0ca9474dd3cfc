-- luacheck (Debian's lua-check) for the custom Kong plugin and the local gateway's Lua PDK:
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

-- The local gateway's PDK (run by wasmoon's Lua 5.4 or LuaJIT) builds `ngx` and talks to its
-- TypeScript host through globals named __js_* (host functions) and __kong_* (entry points).
files["gateway/local/lua/**/*.lua"] = {
    globals = { "ngx" },
    read_globals = { "math.tointeger" }, -- Lua 5.4's; the PDK checks for it before use
    ignore = { "11./__.*" },
}

-- The data plane (Lua on nginx + ngx_lua): Kong's own modules, which patch ngx (the test clock)
-- and set the `kong` global in init.
files["gateway/local/data-plane/lua/**/*.lua"] = {
    globals = { "kong", "ngx.now", "ngx.time" },
}

-- busted specs of the data plane, run inside nginx (test/data-plane/lua-specs.ts)
files["test/data-plane/lua/**/*_spec.lua"] = {
    std = "ngx_lua+busted",
    globals = { "ngx" },
}
