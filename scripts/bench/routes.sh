#!/usr/bin/env bash
# Benchmark: routes at scale through the real custom Caddy (render time, write-to-live propagation,
# Caddy RSS, wrk throughput and latency against a direct backend and a minimal Caddy config).
# See the header of scripts/bench/routes.ts for the setup and what each figure means.
#   bash scripts/bench/routes.sh
#   BENCH_SIZES=1000,10000,100000 BENCH_WRK_TOTALS=10000,100000 BENCH_DURATION=10s BENCH_CONNECTIONS=32 BENCH_PROPAGATION_RUNS=30 BENCH_FLEET=1000 BENCH_FLEET_AT=10000 BENCH_FLEET_RUN_S=30 bash scripts/bench/routes.sh
# (BENCH_WRK_TOTALS: route totals at which wrk runs besides the target route alone.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
command -v go >/dev/null || { echo "go is missing (needed for the backend and bin/caddy)" >&2; exit 1; }
[[ -x bin/caddy ]] || bash scripts/build-caddy.sh
exec node --import tsx scripts/bench/routes.ts
