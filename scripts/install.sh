#!/usr/bin/env bash
# Installs Gatehouse for systemd on bare metal (Debian), from a checkout:
#   - the built app (sidecar, shared package, admin UI, production node_modules, our Caddy) in
#     PREFIX (default /opt/gatehouse), started by PREFIX/bin/gatehouse;
#   - the unit /etc/systemd/system/gatehouse.service (configs/systemd/gatehouse.service): the sidecar
#     as user `gatehouse`, supervising Caddy, with CAP_NET_ADMIN + CAP_NET_BIND_SERVICE only;
#   - /etc/gatehouse/gatehouse.env (configs/gatehouse.env.example with the system paths; an existing
#     file is kept), the system user (sysusers.d), the WireGuard module at boot (modules-load.d).
# Usage: scripts/install.sh [--root DIR] [--prefix PATH] [--no-build] [--no-start]
#   --root DIR   install into DIR as the root of the target system (packaging, tests); nothing is
#                enabled or started, the user is created in DIR/etc/passwd (systemd-sysusers --root)
#   --no-build   use what `npm run build` already produced (sidecar/dist, sidecar/common/dist,
#                sidecar/ui/dist, bin/caddy) instead of building
#   --no-start   on the live system: install and enable, but do not start
# Needs, on the target: node (>= 20, Debian's nodejs), wireguard-tools, wireguard-go, iproute2
# (scripts/setup.sh installs them on this machine).
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="" prefix=/opt/gatehouse build=1 start=1
while (($#)); do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) root="${1#--root=}"; shift ;;
    --prefix) prefix="${2:?--prefix needs a path}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --no-build) build=0; shift ;;
    --no-start) start=0; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
root="${root%/}"
[[ -z "$root" || "$root" == /* ]] || root="$(cd "$root" && pwd)"
live=0; [[ -z "$root" ]] && live=1
if ((live)) && [[ $(id -u) -ne 0 ]]; then echo "install: run as root (or use --root DIR)" >&2; exit 1; fi

if ((build)); then
  (cd "$src" && bash scripts/setup.sh && npm run -s build)
fi
for f in sidecar/dist/main.js sidecar/common/dist sidecar/ui/dist/index.html bin/caddy node_modules; do
  [[ -e "$src/$f" ]] || { echo "install: $src/$f is missing: run \`npm run build\` first (or drop --no-build)" >&2; exit 1; }
done

dest="$root$prefix"
echo "install: app -> $dest"
rm -rf "$dest.new"
mkdir -p "$dest.new/bin" "$dest.new/sidecar/common" "$dest.new/sidecar/ui" "$dest.new/gateway"
cp "$src/package.json" "$src/package-lock.json" "$src/README.md" "$dest.new/"
cp -a "$src/docs" "$dest.new/" # the README links into it
cp "$src/sidecar/package.json" "$dest.new/sidecar/"
cp -a "$src/sidecar/dist" "$dest.new/sidecar/"
cp "$src/sidecar/common/package.json" "$dest.new/sidecar/common/"
cp -a "$src/sidecar/common/dist" "$dest.new/sidecar/common/"
cp "$src/sidecar/ui/package.json" "$dest.new/sidecar/ui/"
cp -a "$src/sidecar/ui/dist" "$dest.new/sidecar/ui/"
cp "$src/gateway/package.json" "$dest.new/gateway/" # a workspace of the lock file; not run here
cp -a "$src/node_modules" "$dest.new/"
(cd "$dest.new" && npm prune --omit=dev --offline --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
install -m 0755 "$src/bin/caddy" "$dest.new/bin/caddy"
cat > "$dest.new/bin/gatehouse" <<'EOF'
#!/bin/sh
# Starts the Gatehouse sidecar (which starts Caddy and the WireGuard interface); see gatehouse.service.
# Runs the app of the directory it is in (<prefix>/bin/..).
app="$(cd "$(dirname "$0")/.." && pwd)" || exit 1
cd "$app" || exit 1
exec node --conditions=gatehouse-compiled "$app/sidecar/dist/main.js" "$@"
EOF
chmod 0755 "$dest.new/bin/gatehouse"
# the operator commands (unlock-account, reset-admin-password, rotate-master-key) on this install
install -m 0755 "$src/configs/gatehouse-cli" "$dest.new/bin/gatehouse-cli"
rm -rf "$dest.old"
[[ -e "$dest" ]] && mv "$dest" "$dest.old"
mv "$dest.new" "$dest"
rm -rf "$dest.old"

echo "install: units and configuration -> ${root:-/}"
install -d "$root/etc/systemd/system" "$root/etc/gatehouse" "$root/usr/lib/sysusers.d" "$root/etc/modules-load.d"
sed "s#/opt/gatehouse#$prefix#g" "$src/configs/systemd/gatehouse.service" > "$root/etc/systemd/system/gatehouse.service"
chmod 0644 "$root/etc/systemd/system/gatehouse.service"
install -m 0644 "$src/configs/systemd/gatehouse.sysusers" "$root/usr/lib/sysusers.d/gatehouse.conf"
install -m 0644 "$src/configs/systemd/gatehouse-modules.conf" "$root/etc/modules-load.d/gatehouse.conf"
if [[ -e "$root/etc/gatehouse/gatehouse.env" ]]; then
  echo "install: keeping $root/etc/gatehouse/gatehouse.env"
else
  sed -e "s#^GATEHOUSE_DATA_DIR=.*#GATEHOUSE_DATA_DIR=/var/lib/gatehouse#" \
      -e "s#^\#GATEHOUSE_CADDY_BIN=.*#GATEHOUSE_CADDY_BIN=$prefix/bin/caddy#" \
      "$src/configs/gatehouse.env.example" > "$root/etc/gatehouse/gatehouse.env"
  chmod 0640 "$root/etc/gatehouse/gatehouse.env"
fi

echo "install: system user gatehouse"
if ((live)); then systemd-sysusers gatehouse.conf; else systemd-sysusers --root="$root" "$root/usr/lib/sysusers.d/gatehouse.conf"; fi
if ((live)); then
  chgrp gatehouse /etc/gatehouse/gatehouse.env
  modprobe wireguard 2>/dev/null || echo "install: no WireGuard kernel module; Gatehouse will run wireguard-go"
  systemctl daemon-reload
  if ((start)); then systemctl enable --now gatehouse.service; else systemctl enable gatehouse.service; fi
  echo "install: done. Logs: journalctl -u gatehouse; settings: /etc/gatehouse/gatehouse.env"
else
  echo "install: done (into $root; nothing enabled or started)"
fi
