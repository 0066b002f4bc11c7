#!/usr/bin/env bash
# Route auth through Caddy: a protected route (valid session cookie, forward auth to the sidecar)
# against the same route unprotected, wrk -t1 with 1 and BENCH_CONNECTIONS (default 32) connections.
# See the header of scripts/bench/forward-auth.ts. (Verify called directly: forward-auth-verify.sh.)
#   bash scripts/bench/forward-auth.sh
#   BENCH_DURATION=10s BENCH_CONNECTIONS=32 bash scripts/bench/forward-auth.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
[[ -x bin/caddy ]] || { echo "bin/caddy is missing: bash scripts/build-caddy.sh" >&2; exit 1; }
exec node --import tsx scripts/bench/forward-auth.ts
