#!/usr/bin/env bash
# Installs everything Gatehouse needs on a fresh Debian machine (as root): Debian packages, npm
# packages, the custom Caddy build, and the compiled sidecar. Idempotent: re-running skips what is
# already there. Used by `npm start`, `npm test` and .ci/run.
#   SETUP_TEST=1  also installs what the tests need (PostgreSQL, wrk, chromium, ping, ...)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

need=(wireguard-go wireguard-tools iproute2 ca-certificates)
if [[ "${SETUP_TEST:-0}" == 1 ]]; then
  need+=(postgresql wrk hyperfine iputils-ping curl ncat chromium prometheus hey e2fsprogs systemd)
  # the RDP end-to-end tests: a real RDP server (xrdp + its TigerVNC desktop) and client (FreeRDP under Xvfb)
  need+=(xrdp tigervnc-standalone-server freerdp2-x11 xvfb xauth openssl)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "setup: apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages. The native ones (argon2, bcrypt, sqlite3) build, when no prebuilt binary fits,
# against the system Node headers in /usr/include/node, never downloading headers. node-gyp takes
# that from npm_package_config_node_gyp_nodedir in the environment (npm 11 refuses unknown keys such
# as nodedir in .npmrc, with a warning on every command, and drops them in its next major version).
export npm_package_config_node_gyp_nodedir="${npm_package_config_node_gyp_nodedir:-/usr}"
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

bash scripts/build-caddy.sh
echo "setup: compiling the sidecar (tsc)"
npm run -s -w @gatehouse/sidecar build
echo "setup: building the admin app (vite)"
npm run -s -w @gatehouse/ui build
