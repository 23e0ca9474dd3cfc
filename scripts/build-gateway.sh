#!/usr/bin/env bash
# Bundles the local gateway's two entry points into plain JavaScript beside their sources
# (gateway/local/cmd/*.built.mjs, ignored by git), which `npm start`, `npm run start:cluster`,
# the bench and the fuzz run execute with node alone. Under tsx the control plane's process is
# ~35 MB larger (the loader and esbuild's API stay resident), a quarter of the gateway's memory
# budget. Beside the sources, import.meta.url-relative paths (the data plane's directory) hold.
# npm packages stay external; esbuild takes ~50 ms, so every run rebuilds and none goes stale.
set -euo pipefail
cd "$(dirname "$0")/.."
# Built aside and renamed into place: a gateway starting meanwhile reads the old file or the new.
staging=$(mktemp -d gateway/local/cmd/.build-XXXXXX)
trap 'rm -rf "$staging"' EXIT
node_modules/.bin/esbuild gateway/local/cmd/start.ts gateway/local/cmd/cluster-start.ts \
  --bundle --platform=node --format=esm --target=node20 --packages=external \
  --outdir="$staging" --out-extension:.js=.built.mjs --log-level=warning
mv -f "$staging"/*.built.mjs gateway/local/cmd/
