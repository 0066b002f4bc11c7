#!/usr/bin/env bash
# Benchmark: a route with two backends (round robin) vs a single-target route, through the real
# Caddy. See the header of scripts/bench/route-backends.ts.
#   bash scripts/bench/route-backends.sh
#   BENCH_DURATION=5s BENCH_ROUNDS=10 bash scripts/bench/route-backends.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
command -v go >/dev/null || { echo "go is missing (needed for the backend and bin/caddy)" >&2; exit 1; }
[[ -x bin/caddy ]] || bash scripts/build-caddy.sh
exec node --import tsx scripts/bench/route-backends.ts
