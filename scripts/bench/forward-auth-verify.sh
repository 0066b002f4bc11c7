#!/usr/bin/env bash
# Benchmark of route auth's forward-auth endpoint GET /route-auth/verify, called directly the way
# Caddy's forward_auth subrequest calls it (valid session cookie, X-Route-Domain, X-Forwarded-*),
# compared in the same run with a bare `node -e` HTTP server answering 204 (the floor for any
# Node endpoint on this machine) and a bare Koa app with one middleware (the framework floor). With bin/caddy present it also measures a route through Caddy
# with forward auth against the same route without it (same backend, same Caddy).
#
#   BENCH_DURATION=10s BENCH_CONNECTIONS=32 BENCH_CADDY=1 bash scripts/bench/forward-auth-verify.sh
#
# Prints requests/s and p50/p99 for each, the ratio to its baseline, and the non-2xx count.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
dur=${BENCH_DURATION:-10s}
conns=${BENCH_CONNECTIONS:-32}
use_caddy=${BENCH_CADDY:-1}
[[ -x bin/caddy ]] || use_caddy=0

dir=$(mktemp -d /tmp/gatehouse-bench-fa.XXXXXX)
# The sidecar is compiled for this run (production JS, not tsx) into a directory below the repo's
# node_modules, so its imports resolve.
mkdir -p node_modules/.cache
dist=$(mktemp -d "$root/node_modules/.cache/gatehouse-bench-fa.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir" "$dist"
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_port() { for _ in $(seq 1 150); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; return 1; }

bare_port=$(free_port)
node -e "require('http').createServer((q,s)=>{s.statusCode=204;s.end()}).listen($bare_port,'127.0.0.1')" &
pids+=($!)
koa_port=$(free_port)
node -e "const Koa=require('koa');const a=new Koa();a.use(async(c)=>{c.status=204});a.listen($koa_port,'127.0.0.1')" &
pids+=($!)

sidecar_port=$(free_port)
caddy_port=$(free_port)
backend_port=$(free_port)
env_caddy=()
if [[ $use_caddy == 1 ]]; then
  node -e "require('http').createServer((q,s)=>{s.setHeader('content-type','text/plain');s.end('ok\n')}).listen($backend_port,'127.0.0.1')" &
  pids+=($!)
  env_caddy=(BENCH_CADDY_CONFIG="$dir/caddy.json" BENCH_CADDY_PORT="$caddy_port" BENCH_BACKEND="127.0.0.1:$backend_port")
fi
(cd sidecar && npx tsc -p common/tsconfig.json && npx tsc -p tsconfig.json --outDir "$dist" >/dev/null 2>&1) || true
[[ -f $dist/server.js ]] || { echo "compiling the sidecar failed" >&2; exit 1; }
fast_port=$(free_port)
(exec env BENCH_DIST="$dist" BENCH_SIDECAR_PORT="$sidecar_port" BENCH_FAST_PORT="$fast_port" "${env_caddy[@]}" node --conditions=gatehouse-compiled scripts/bench/forward-auth-verify.mjs >"$dir/setup.json" 2>"$dir/setup.log") &
pids+=($!)
for _ in $(seq 1 300); do [[ -s $dir/setup.json ]] && break; sleep 0.1; done
[[ -s $dir/setup.json ]] || { echo "sidecar setup failed:" >&2; cat "$dir/setup.log" >&2; exit 1; }
cookie=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).cookie' "$dir/setup.json")
domain=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).domain' "$dir/setup.json")
wait_port "$bare_port"
wait_port "$koa_port"

verify_url="http://127.0.0.1:$sidecar_port/route-auth/verify"
fast_url="http://127.0.0.1:$fast_port/route-auth/verify"
vh=(-H "Cookie: $cookie" -H "X-Route-Domain: $domain" -H "X-Forwarded-Method: GET" -H "X-Forwarded-Uri: /some/page?x=1" -H "X-Forwarded-Proto: https" -H "X-Forwarded-For: 203.0.113.10")
check=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" -H "X-Route-Domain: $domain" -H "X-Forwarded-Uri: /" "$verify_url")
[[ $check == 204 ]] || { echo "verify answered $check, expected 204" >&2; exit 1; }
nocookie=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Route-Domain: $domain" -H "X-Forwarded-Uri: /" "$verify_url")
[[ $nocookie == 302 ]] || { echo "verify without cookie answered $nocookie, expected 302" >&2; exit 1; }
fcheck=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" -H "X-Route-Domain: $domain" "$fast_url")
[[ $fcheck == 204 ]] || { echo "fast-path verify answered $fcheck, expected 204" >&2; exit 1; }

to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }
# run NAME CONNECTIONS URL [wrk args...] → sets r_rps r_p50 r_p99 (ms) r_non2xx
run() {
  local name=$1 c=$2 url=$3
  shift 3
  wrk -t1 -c"$c" -d2s "$@" "$url" >/dev/null
  local out
  out=$(wrk -t1 -c"$c" -d"$dur" --latency "$@" "$url")
  r_rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  r_p50=$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")")
  r_p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  r_non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  r_non2xx=${r_non2xx:-0}
  r_errors=$(awk '/Socket errors/ {print $0}' <<<"$out")
  printf '  %-44s %10s req/s   p50 %8s ms   p99 %8s ms   non-2xx %s %s\n' "$name" "$r_rps" "$r_p50" "$r_p99" "$r_non2xx" "$r_errors"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
diffms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

echo "bench forward-auth verify: wrk -t1, $dur per run (2 s warm-up), loopback, $(nproc) cores, SQLite, compiled sidecar, $(node --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "throughput, $conns connections:"
run "bare node http 204 (floor)" "$conns" "http://127.0.0.1:$bare_port/"
b_rps=$r_rps; b_p50=$r_p50; b_p99=$r_p99
run "bare Koa app, one middleware 204" "$conns" "http://127.0.0.1:$koa_port/"
k_rps=$r_rps
run "GET /route-auth/verify, valid session" "$conns" "$verify_url" "${vh[@]}"
v_rps=$r_rps; v_p50=$r_p50; v_p99=$r_p99; v_non=$r_non2xx
echo "  → verify/bare-node throughput ratio $(ratio "$v_rps" "$b_rps") (verify/bare-Koa $(ratio "$v_rps" "$k_rps")), p50 +$(diffms "$v_p50" "$b_p50") ms, p99 +$(diffms "$v_p99" "$b_p99") ms, verify non-2xx $v_non"
run "same verify on node http, no Koa (fast path)" "$conns" "$fast_url" "${vh[@]}"
echo "  → fast-path/bare-node throughput ratio $(ratio "$r_rps" "$b_rps"), p50 +$(diffms "$r_p50" "$b_p50") ms, p99 +$(diffms "$r_p99" "$b_p99") ms, non-2xx $r_non2xx"
echo "latency, 1 connection:"
run "bare node http 204 (floor)" 1 "http://127.0.0.1:$bare_port/"
b1_p50=$r_p50; b1_rps=$r_rps
run "bare Koa app, one middleware 204" 1 "http://127.0.0.1:$koa_port/"
run "GET /route-auth/verify, valid session" 1 "$verify_url" "${vh[@]}"
echo "  → verify/bare-node throughput ratio $(ratio "$r_rps" "$b1_rps"), p50 +$(diffms "$r_p50" "$b1_p50") ms"
run "same verify on node http, no Koa (fast path)" 1 "$fast_url" "${vh[@]}"
echo "  → fast-path/bare-node throughput ratio $(ratio "$r_rps" "$b1_rps"), p50 +$(diffms "$r_p50" "$b1_p50") ms"

if [[ $use_caddy == 1 ]]; then
  bin/caddy run --config "$dir/caddy.json" >"$dir/caddy.log" 2>&1 &
  pids+=($!)
  wait_port "$caddy_port"
  wait_port "$backend_port"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $domain" -H "Cookie: $cookie" "http://127.0.0.1:$caddy_port/")
  [[ $code == 200 ]] || { echo "protected route through Caddy answered $code" >&2; cat "$dir/caddy.log" >&2; exit 1; }
  echo "through Caddy (same Caddy, same backend; open.bench has no auth, $domain has forward auth):"
  for c in "$conns" 1; do
    run "unprotected route, $c conn" "$c" "http://127.0.0.1:$caddy_port/" -H "Host: open.bench"
    o_rps=$r_rps; o_p50=$r_p50; o_p99=$r_p99
    run "route-auth route, valid session, $c conn" "$c" "http://127.0.0.1:$caddy_port/" -H "Host: $domain" -H "Cookie: $cookie"
    echo "  → protected/unprotected throughput ratio $(ratio "$r_rps" "$o_rps"), p50 +$(diffms "$r_p50" "$o_p50") ms, p99 +$(diffms "$r_p99" "$o_p99") ms, non-2xx $r_non2xx"
  done
fi
