#!/bin/sh
# Entry point of the Gatehouse server image (Dockerfile). Started as root (the image's default), it
# prepares what the unprivileged user `gatehouse` cannot, then runs the command (the sidecar) in its
# place as `gatehouse`, so the sidecar is PID 1 and receives the runtime's SIGTERM:
#   - /dev/net/tun: a container runtime creates the device node with the host's mode, which is 0600
#     (root only) on some hosts; wireguard-go must open it. The node is the container's own: its
#     group becomes `gatehouse`.
#   - the data directory: a bind mount or an old volume may belong to another user; whatever in it
#     is not gatehouse's becomes gatehouse's (nothing is touched when all of it already is).
#   - capabilities: the sidecar gets CAP_NET_ADMIN (ip, wg, wireguard-go) and CAP_NET_BIND_SERVICE
#     (Caddy on 80 and 443) as ambient capabilities, and nothing else in its bounding set, as the
#     systemd unit does. File capabilities would not do: iproute2's `ip` drops every capability at
#     start when run by another user than root unless CAP_NET_ADMIN is inheritable.
# Needs CAP_CHOWN, CAP_SETUID and CAP_SETGID besides NET_ADMIN and NET_BIND_SERVICE, and CAP_SETPCAP
# to shrink the bounding set (all in Docker's and Podman's default set; configs/docker-compose.yml
# lists them after cap_drop: ALL).
set -eu
# as the systemd unit's UMask: nothing in the data directory is readable by other users
umask 0027

if [ "$(id -u)" != 0 ]; then
  echo "gatehouse-entrypoint: started as uid $(id -u), not root: running the command unchanged (WireGuard needs CAP_NET_ADMIN as an ambient capability, which only a root start can hand on)" >&2
  exec "$@"
fi

if [ -c /dev/net/tun ]; then
  chgrp gatehouse /dev/net/tun && chmod g+rw /dev/net/tun ||
    echo "gatehouse-entrypoint: cannot open /dev/net/tun to the group gatehouse; WireGuard in userspace will fail" >&2
fi

data="${GATEHOUSE_DATA_DIR:-/var/lib/gatehouse}"
mkdir -p "$data" /run/wireguard
if [ "$(stat -c %U /run/wireguard)" != gatehouse ]; then
  # (chmod before chown: root without CAP_FOWNER may not chmod what is not its own)
  chmod 0750 /run/wireguard && chown gatehouse:gatehouse /run/wireguard
fi
if [ -n "$(find "$data" ! -user gatehouse -print -quit)" ]; then
  echo "gatehouse-entrypoint: $data (or something in it) is not owned by gatehouse; changing its owner" >&2
  find "$data" ! -user gatehouse -exec chown -h gatehouse:gatehouse {} +
fi

caps=+net_admin,+net_bind_service
# The bounding set can only shrink with CAP_SETPCAP (bit 8 of CapEff); without it, it stays as given.
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
bounding=
if [ $((0x$capeff & 0x100)) -ne 0 ]; then bounding="--bounding-set=-all,$caps"; fi
exec setpriv --reuid=gatehouse --regid=gatehouse --init-groups \
  --inh-caps=-all,$caps --ambient-caps=-all,$caps $bounding -- "$@"
