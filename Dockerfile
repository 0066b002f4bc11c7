# syntax=docker/dockerfile:1
#
# The Gatehouse server: the sidecar (admin UI and API, route-auth pages, gateway and client APIs),
# which starts and supervises our Caddy and drives the WireGuard interface, as `npm start` does.
# Caddy comes from xcaddy.Dockerfile's image (the same go.mod-pinned build as bin/caddy), so build
# that one first (from the repository root):
#   docker build -f xcaddy.Dockerfile -t gatehouse-caddy .
#   docker build -t gatehouse .
# or both with configs/docker-compose.yml. scripts/test-containers.sh builds and runs both (CI).
#
# The sidecar runs as the unprivileged user `gatehouse` with two capabilities, as under systemd:
# CAP_NET_ADMIN (ip, wg, wireguard-go; iptables and sysctl for full-tunnel NAT, docs/guides/peers.md) and CAP_NET_BIND_SERVICE (Caddy on 80 and 443). WireGuard needs
# `--cap-add NET_ADMIN --device /dev/net/tun` (compose does this). The entry point
# (configs/docker-entrypoint.sh) starts as root to give the group `gatehouse` the container's
# /dev/net/tun (0600 on some hosts) and the data directory, then drops to `gatehouse` with those two
# as ambient capabilities and execs the sidecar (PID 1: it gets the runtime's SIGTERM).

# The base images are build arguments (a mirror, a pinned digest, or the locally made images that
# scripts/test-containers.sh passes where no registry is reachable).
ARG DEBIAN_IMAGE=debian:trixie-slim
ARG CADDY_IMAGE=gatehouse-caddy:latest

FROM ${CADDY_IMAGE} AS caddy

# Node, npm and a compiler: the native modules (argon2, bcrypt, sqlite3) build against Debian's Node
# headers, as scripts/setup.sh does on a host.
FROM ${DEBIAN_IMAGE} AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm g++ make python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV npm_package_config_node_gyp_nodedir=/usr
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY sidecar/package.json sidecar/
COPY sidecar/common/package.json sidecar/common/
COPY sidecar/ui/package.json sidecar/ui/
COPY gateway/package.json gateway/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --loglevel=error

# Production dependencies only (a layer of its own: it changes only with the lock file). sqlite3
# keeps its compiled module and nothing else of its build.
FROM deps AS prod-deps
RUN npm prune --omit=dev --no-audit --no-fund --loglevel=error \
 && mv node_modules/sqlite3/build/Release/node_sqlite3.node /tmp/ \
 && rm -rf node_modules/sqlite3/build node_modules/sqlite3/deps \
 && mkdir -p node_modules/sqlite3/build/Release \
 && mv /tmp/node_sqlite3.node node_modules/sqlite3/build/Release/

# The shared package, the sidecar (tsc) and the admin app (vite).
FROM deps AS build
COPY sidecar/ sidecar/
RUN npm run -s -w @gatehouse/sidecar build \
 && npm run -s -w @gatehouse/ui build

FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs wireguard-tools wireguard-go iproute2 iptables procps ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/gatehouse --shell /usr/sbin/nologin gatehouse \
 && install -d -o gatehouse -g gatehouse -m 0750 /var/lib/gatehouse /run/wireguard
WORKDIR /opt/gatehouse
COPY --from=prod-deps /src/node_modules node_modules/
COPY package.json package-lock.json ./
COPY sidecar/package.json sidecar/
COPY sidecar/common/package.json sidecar/common/
COPY sidecar/ui/package.json sidecar/ui/
COPY gateway/package.json gateway/
COPY --from=build /src/sidecar/common/dist sidecar/common/dist/
COPY --from=build /src/sidecar/dist sidecar/dist/
COPY --from=build /src/sidecar/ui/dist sidecar/ui/dist/
COPY --from=caddy /usr/bin/caddy bin/caddy
COPY --chmod=0755 configs/docker-entrypoint.sh /usr/local/bin/gatehouse-entrypoint
# the operator commands: podman/docker exec <container> gatehouse-cli <command>
COPY --chmod=0755 configs/gatehouse-cli /usr/local/bin/gatehouse-cli

ENV GATEHOUSE_DATA_DIR=/var/lib/gatehouse \
    GATEHOUSE_CADDY_BIN=/opt/gatehouse/bin/caddy \
    GATEHOUSE_BIND=0.0.0.0 \
    WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 \
    NODE_ENV=production
VOLUME ["/var/lib/gatehouse"]
# 80/443: Caddy; 3000: admin UI and APIs; 51820/udp: WireGuard
EXPOSE 80 443 443/udp 3000 51820/udp
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+(process.env.GATEHOUSE_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/local/bin/gatehouse-entrypoint"]
CMD ["node", "--conditions=gatehouse-compiled", "/opt/gatehouse/sidecar/dist/main.js"]
