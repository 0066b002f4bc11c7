#!/usr/bin/env bash
# Starts Debian's PostgreSQL cluster if needed and prints a URL of a role that may create databases
# (each test server creates its own database). Used by scripts/test.sh.
set -euo pipefail
ver=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)
[[ -n "$ver" ]] || { echo "no PostgreSQL installed" >&2; exit 1; }
if ! pg_lsclusters -h 2>/dev/null | grep -q "^$ver main"; then pg_createcluster "$ver" main >/dev/null; fi
pg_ctlcluster "$ver" main start >/dev/null 2>&1 || true
for _ in $(seq 1 30); do pg_isready -q && break; sleep 0.5; done
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_roles WHERE rolname='gatehouse_test'\" | grep -q 1 || psql -q -c \"CREATE ROLE gatehouse_test LOGIN CREATEDB PASSWORD 'gatehouse_test'\"" >&2
echo "postgres://gatehouse_test:gatehouse_test@127.0.0.1:5432/postgres"
