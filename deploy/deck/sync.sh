#!/bin/sh
# docker-compose.yml's deck-sync (docs/shared-kong.md): our file is linted before anything is
# synced, as written (gateway/lint/team.yaml: no global plugin, our select tag and tags only, our
# service names, routes under /v1)
# and rendered with the DECK_ variables (gateway/lint/hosts.yaml: hosts on every route, an error
# with LINT_FAIL_SEVERITY=warn on a shared gateway). Then the platform's file and ours are synced,
# platform first, each within its own select tag. Any failure stops here, before or between
# syncs, and the one-shot restarts (restart: on-failure).
set -eu

deck file lint -s /deck/kong.yml /deck/lint/team.yaml
deck file render --populate-env-vars /deck/kong.yml -o /tmp/kong.rendered.yml
deck file lint -s /tmp/kong.rendered.yml --fail-severity "${LINT_FAIL_SEVERITY:-error}" /deck/lint/hosts.yaml

deck gateway sync /deck/platform/kong.yml
deck gateway sync /deck/kong.yml
