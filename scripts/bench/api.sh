#!/usr/bin/env bash
# Benchmark: authenticated GET /api/v1/users with an API token (token lookup, scope check, one
# SELECT, JSON). Starts a throwaway sidecar (SQLite, no Caddy/WireGuard) on loopback and drives it
# with wrk (-t1 -c32, 10 s by default). Prints requests/s and p50/p99.
#   BENCH_DURATION=10s BENCH_CONNECTIONS=32 bash scripts/bench/api.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
dur=${BENCH_DURATION:-10s}
conns=${BENCH_CONNECTIONS:-32}
dir=$(mktemp -d /tmp/gatehouse-bench-api.XXXXXX)
port=$((20000 + RANDOM % 20000))
[[ -f sidecar/dist/main.js ]] || npm run -s -w @gatehouse/sidecar build
GATEHOUSE_DATA_DIR=$dir GATEHOUSE_PORT=$port GATEHOUSE_ADMIN_PASSWORD=bench-password-1 GATEHOUSE_MANAGE_CADDY=false \
  GATEHOUSE_WG_MANAGE=false GATEHOUSE_RATE_LIMIT_ADMIN=100000000 GATEHOUSE_LOG_LEVEL=error \
  node --conditions=gatehouse-compiled sidecar/dist/main.js >"$dir/sidecar.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
jar="$dir/cookies"
csrf=$(curl -sf -c "$jar" -H 'Accept: application/json' -H 'Content-Type: application/json' \
  -d '{"username":"admin","password":"bench-password-1"}' "http://127.0.0.1:$port/login" | node -pe 'JSON.parse(require("fs").readFileSync(0)).csrfToken')
token=$(curl -sf -b "$jar" -H "X-CSRF-Token: $csrf" -H 'Content-Type: application/json' \
  -d '{"name":"bench","scopes":["full-access"]}' "http://127.0.0.1:$port/api/v1/tokens" | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
# warm-up
wrk -t1 -c"$conns" -d2s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/users" >/dev/null
out=$(wrk -t1 -c"$conns" -d"$dur" --latency -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/users")
rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
p50=$(awk '$1=="50%" {print $2}' <<<"$out")
p99=$(awk '$1=="99%" {print $2}' <<<"$out")
non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
rss=$(awk '/VmRSS/ {print $2" "$3}' /proc/$pid/status)
echo "bench api: GET /api/v1/users with a Bearer token, wrk -t1 -c$conns -d$dur on loopback, $(nproc) cores, SQLite"
echo "  requests/s: $rps   p50: $p50   p99: $p99   non-2xx: ${non2xx:-0}   sidecar RSS: $rss"
