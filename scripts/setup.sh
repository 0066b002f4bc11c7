#!/usr/bin/env bash
# Installs everything Gatehouse needs on a fresh Debian machine (as root): Debian packages, npm
# packages, the custom Caddy build, the compiled sidecar and the admin app. Idempotent: re-running
# skips what is already there, and each build is skipped (and says so) when its outputs are newer
# than every one of its inputs, so a start with nothing changed goes straight to the sidecar.
# Used by `npm start`, `npm test` and .ci/run.
#   SETUP_TEST=1  also installs what the tests need (PostgreSQL, wrk, chromium, ping, ...)
#   SETUP_FORCE_BUILD=1  builds the sidecar and the admin app even when they look up to date
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

need=(wireguard-go wireguard-tools iproute2 iptables procps ca-certificates)
if [[ "${SETUP_TEST:-0}" == 1 ]]; then
  need+=(postgresql wrk hyperfine iputils-ping curl ncat chromium prometheus hey e2fsprogs systemd)
  # the speed-cap test measures through a tunnel with iperf3 (test/e2e/speed-caps.test.ts)
  need+=(iperf3)
  # the floating-address test moves an address between namespaces with real keepalived (test/e2e/cluster-vrrp.test.ts)
  need+=(keepalived)
  # the RDP end-to-end tests: a real RDP server (xrdp + its TigerVNC desktop) and client (FreeRDP under Xvfb)
  need+=(xrdp tigervnc-standalone-server freerdp2-x11 xvfb xauth openssl)
  # the container test (scripts/test-containers.sh): image builds, runs, locally made base images
  need+=(buildah podman runc mmdebstrap)
fi
# One dpkg-query for the whole list (it names the installed ones; unknown names go to stderr).
declare -A installed=()
while read -r name status; do
  [[ "$status" == "install ok installed" ]] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${need[@]}" 2>/dev/null || true)
missing=()
for p in "${need[@]}"; do
  [[ -n "${installed[$p]:-}" ]] || missing+=("$p")
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
# npm ci when node_modules is missing or older than the lockfile (npm writes its own copy of the
# tree, node_modules/.package-lock.json, at every install: a file test, no npm process).
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules/.package-lock.json
fi

bash scripts/build-caddy.sh

# the compiled sidecar and the admin app, each built only when its sources are newer than its last build
bash scripts/build-app.sh
