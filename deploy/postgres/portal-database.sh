#!/bin/sh
# The developer portal's own role and database on the stack's PostgreSQL (docker-compose.yml's
# portal-database, docs/portal.md), run as Kong's role, which owns the server. Idempotent: it
# creates what is missing and sets the role's password (PORTAL_PG_PASSWORD) on every run, so a
# changed password takes effect at the next `docker compose up`. The portal's role owns its own
# database only: it can neither read Kong's nor create roles.
set -eu
: "${PORTAL_PG_PASSWORD:?PORTAL_PG_PASSWORD must be set}"
psql -v ON_ERROR_STOP=1 -v password="$PORTAL_PG_PASSWORD" <<'SQL'
SELECT 'CREATE ROLE portal LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'portal')
\gexec
ALTER ROLE portal WITH LOGIN PASSWORD :'password';
SELECT 'CREATE DATABASE portal OWNER portal' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'portal')
\gexec
REVOKE ALL ON DATABASE portal FROM PUBLIC;
SQL
