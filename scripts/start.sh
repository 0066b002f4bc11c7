#!/usr/bin/env bash
# Installs what is missing and starts Gatehouse on its embedded defaults (SQLite under ./data,
# Caddy admin on 127.0.0.1:2019, WireGuard wg0 in userspace when the kernel module is missing).
# Any GATEHOUSE_* variable in the environment or in ./gatehouse.env overrides a default.
# The sidecar replaces this shell (exec), as `npm start`'s shell replaces itself with this script
# (package.json: "exec bash scripts/start.sh"), so SIGTERM to the process a service manager or a
# container runtime started (npm, which forwards it to its one child) reaches the sidecar, which
# stops Caddy, takes the WireGuard interface down and exits (test/e2e/npm-start.test.ts).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
if [[ -f gatehouse.env ]]; then set -a; . ./gatehouse.env; set +a; fi
export WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1
exec node --conditions=gatehouse-compiled sidecar/dist/main.js
