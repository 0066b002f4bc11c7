#!/usr/bin/env bash
# Runs every benchmark in turn (as root: some use network namespaces and WireGuard). Prints figures.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1
rc=0
for b in "bash scripts/bench/api.sh" "node --import tsx scripts/bench/peers.ts" "node --import tsx scripts/bench/peers-list.ts" \
         "bash scripts/bench/ui-peers.sh" "bash scripts/bench/routes.sh" \
         "bash scripts/bench/forward-auth-verify.sh" "bash scripts/bench/forward-auth.sh" \
         "bash scripts/bench/route-modules.sh" "node --import tsx scripts/bench/access-rules.ts" "node --import tsx scripts/bench/gateway-poll.ts"; do
  echo "== $b"
  $b || rc=1
done
exit $rc
