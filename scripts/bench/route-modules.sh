#!/usr/bin/env bash
# Benchmark: one route with the resilience modules on (bot blocker, circuit breaker, retries) vs the
# same route with none, through the real Caddy; mirroring measured separately. See the header of
# scripts/bench/route-modules.ts.
#   bash scripts/bench/route-modules.sh
#   BENCH_DURATION=10s BENCH_ROUNDS=5 BENCH_CONNECTIONS=32 bash scripts/bench/route-modules.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
command -v go >/dev/null || { echo "go is missing (needed for the backend and bin/caddy)" >&2; exit 1; }
[[ -x bin/caddy ]] || bash scripts/build-caddy.sh
exec node --import tsx scripts/bench/route-modules.ts
