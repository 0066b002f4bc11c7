#!/usr/bin/env bash
# Installs everything (Debian packages, npm packages, the custom Caddy) and runs every test:
# lint and typecheck, go vet + go test -race of the Caddy modules, the sidecar tests on SQLite and
# on PostgreSQL, the end-to-end tests through real Caddy and WireGuard (as root), and the container
# images built and run (scripts/test-containers.sh, as root).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SETUP_TEST=1 bash scripts/setup.sh
export WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1
status=0

# Each section's header says how long the run has taken so far (CI's budget is 40 minutes).
section() { echo "== $1 (at +$(( SECONDS / 60 ))m$(( SECONDS % 60 ))s)"; }

section "lint and typecheck"
npm run -s lint || status=1

section "go vet + go test -race (caddy-modules)"
(cd caddy-modules && go vet ./... && go test -race -count=1 ./...) || status=1

# The sidecar suite on SQLite and on PostgreSQL, side by side (each runs its files one at a time; they
# share no port, interface or directory), to keep CI within its time budget. Each log is printed
# whole afterwards, with its test runner summary.
section "sidecar tests (SQLite and PostgreSQL, side by side)"
mkdir -p test-results
sqlite_log=test-results/sidecar-sqlite.log
pg_log=test-results/sidecar-postgresql.log
bash scripts/test-sidecar.sh > "$sqlite_log" 2>&1 &
sqlite_pid=$!
pg_pid=
if pg_url=$(bash scripts/pg-test-server.sh | tail -1); then
  TEST_DATABASE_URL="$pg_url" bash scripts/test-sidecar.sh > "$pg_log" 2>&1 &
  pg_pid=$!
else
  echo "PostgreSQL could not be started" >&2
  status=1
fi
wait "$sqlite_pid" || status=1
if [[ -n "$pg_pid" ]]; then wait "$pg_pid" || status=1; fi
section "sidecar tests (SQLite): output"
cat "$sqlite_log"
if [[ -n "$pg_pid" ]]; then
  section "sidecar tests (PostgreSQL): output"
  cat "$pg_log"
fi

section "security suite (test/security: secrets by credential, redirects, server-side fetches, CSV, paths, origins, unknown fields)"
mapfile -t security < <(find test/security -name '*.test.ts' 2>/dev/null | sort)
if ((${#security[@]})); then
  node --import tsx --test --test-concurrency=1 "${security[@]}" || status=1
fi

section "gateway companion tests"
(cd gateway && npm test) || status=1

section "reference desktop client tests"
(cd client && npm test) || status=1

section "admin app: dictionaries, bundle budget, browser tests (chromium)"
(npm run -s -w @gatehouse/ui build && node --import tsx --test --test-concurrency=1 sidecar/ui/test/*.test.ts test/ui/*.test.ts) || status=1

section "end-to-end tests (network namespaces, wireguard-go, real Caddy)"
if [[ $(id -u) -eq 0 ]]; then
  mapfile -t e2e < <(find test/e2e -name '*.test.ts' 2>/dev/null | sort)
  if ((${#e2e[@]})); then
    node --import tsx --test --test-concurrency=1 "${e2e[@]}" || status=1
  fi
else
  echo "skipped: the end-to-end tests need root (network namespaces)" >&2
fi

section "container images (buildah: xcaddy.Dockerfile and Dockerfile on locally made base images; podman: the server image run with WireGuard, a route through Caddy, SIGTERM, a restart on its volume; the compose file)"
bash scripts/test-containers.sh || status=1

section "reliability and security suite (faults, load, bad input, secrets at rest)"
if [[ $(id -u) -eq 0 ]]; then
  bash scripts/test-reliability.sh || status=1
else
  echo "skipped: the reliability suite needs root (network namespaces, loop mounts)" >&2
fi
section "done"
exit $status
