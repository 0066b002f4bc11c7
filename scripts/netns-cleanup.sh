#!/usr/bin/env bash
# Removes what crashed end-to-end runs of test/lib/netns.ts left behind, and nothing else:
#   - network namespaces named gtn-<prefix>-<pid>-<id>-<name> whose creating process <pid> is gone
#     (with --all: every gtn-* namespace, e.g. after a reboot-less crash of many runs),
#     after stopping the processes still inside them (they can only be test processes);
#   - host-side veths gtn<id>… whose run has no namespace left;
#   - stale wireguard-go control sockets /var/run/wireguard/gtn*.sock that no process answers on;
#   - /etc/netns/gtn-* (per-namespace /etc files, e.g. the hosts file of the server-side fetch probes)
#     whose namespace is gone.
# Usage: scripts/netns-cleanup.sh [--all] [--dry-run]      (as root)
set -euo pipefail

all=0
dry=0
for a in "$@"; do
  case "$a" in
    --all) all=1 ;;
    -n | --dry-run) dry=1 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option: $a" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "netns-cleanup: needs root" >&2; exit 1; }

# A process counts as running unless it is gone or a zombie.
running() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
act() { if [ "$dry" = 1 ]; then echo "would run: $*"; else "$@" || true; fi; }
removed=0

for ns in $(ip netns list | awk '{print $1}' | grep -E '^gtn-[a-z0-9]+-[0-9]+-[a-z0-9]+-[a-z0-9]+$' || true); do
  pid=$(cut -d- -f3 <<<"$ns")
  if [ "$all" = 0 ] && running "$pid"; then
    echo "keep $ns (its test process $pid is running)"
    continue
  fi
  pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
  if [ -n "${pids// /}" ]; then
    echo "stop processes in $ns: $pids"
    # shellcheck disable=SC2086
    act kill -TERM $pids
    if [ "$dry" = 0 ]; then
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
        sleep 0.2
      done
      left=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
      # shellcheck disable=SC2086
      [ -n "${left// /}" ] && kill -KILL $left 2>/dev/null || true
    fi
  fi
  echo "delete namespace $ns"
  act ip netns del "$ns"
  removed=$((removed + 1))
done

# Host-side veths of runs that have no namespace any more.
for l in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^gtn[a-z0-9]{4}' || true); do
  id=${l:3:4}
  if ! ip netns list | awk '{print $1}' | grep -q -- "-$id-"; then
    echo "delete link $l"
    act ip link del dev "$l"
    removed=$((removed + 1))
  fi
done

# wireguard-go sockets left by a killed wireguard-go (a live one answers `wg show`).
shopt -s nullglob
for s in /var/run/wireguard/gtn*.sock; do
  name=$(basename "$s" .sock)
  if ! wg show "$name" >/dev/null 2>&1; then
    echo "remove stale socket $s"
    act rm -f "$s"
    removed=$((removed + 1))
  fi
done

# Per-namespace /etc files (ip netns exec mounts /etc/netns/<ns>/*) of namespaces that are gone.
for d in /etc/netns/gtn-*; do
  [ -d "$d" ] || continue
  if ! ip netns list | awk '{print $1}' | grep -qx -- "$(basename "$d")"; then
    echo "remove $d"
    act rm -rf "$d"
    removed=$((removed + 1))
  fi
done

echo "netns-cleanup: $removed item(s) $([ "$dry" = 1 ] && echo 'would be ')removed"
