#!/usr/bin/env bash
# Benchmark: the admin app's peers screen in Debian's Chromium at 10,000 peers and 1,000 routes
# (first rows, filtered result, JavaScript bytes). Builds the app, then runs scripts/bench/ui-peers.ts
# (its header says what each figure means).
#   bash scripts/bench/ui-peers.sh          (BENCH_RUNS=7, BENCH_PEERS=10000, BENCH_ROUTES=1000, BENCH_DATABASE_URL)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
npm run -s -w @gatehouse/ui build >/dev/null
exec node --import tsx scripts/bench/ui-peers.ts
