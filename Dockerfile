# syntax=docker/dockerfile:1
#
# The Gatehouse server: the sidecar (admin UI and API, route-auth pages, gateway and client APIs),
# which starts and supervises our Caddy and drives the WireGuard interface, as `npm start` does.
# Caddy comes from xcaddy.Dockerfile's image (the same go.mod-pinned build as bin/caddy):
#   docker build -f xcaddy.Dockerfile -t gatehouse-caddy .
#   docker build -t gatehouse .
# or both with configs/docker-compose.yml (`docker compose -f configs/docker-compose.yml build`).
#
# Runs as the unprivileged user `gatehouse`. WireGuard needs CAP_NET_ADMIN and /dev/net/tun: the
# container gets them with `--cap-add NET_ADMIN --device /dev/net/tun` (compose does this), and
# `ip`, `wg` and `wireguard-go` carry the capability as file capabilities, so the Node process
# itself has none. Do not set no-new-privileges (it disables file capabilities). Caddy carries
# cap_net_bind_service (xcaddy.Dockerfile) for ports 80 and 443.

ARG DEBIAN_RELEASE=trixie
ARG CADDY_IMAGE=gatehouse-caddy:latest

FROM ${CADDY_IMAGE} AS caddy

FROM debian:${DEBIAN_RELEASE}-slim AS build
# Native modules (argon2, bcrypt, sqlite3) compile against Debian's Node headers, as scripts/setup.sh does.
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm node-gyp build-essential python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV npm_package_config_node_gyp_nodedir=/usr
WORKDIR /src
COPY package.json package-lock.json ./
COPY sidecar/package.json sidecar/
COPY sidecar/common/package.json sidecar/common/
COPY sidecar/ui/package.json sidecar/ui/
COPY gateway/package.json gateway/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY sidecar/ sidecar/
RUN npm run -s -w @gatehouse/sidecar build \
 && npm run -s -w @gatehouse/ui build \
 && npm prune --omit=dev --no-audit --no-fund

FROM debian:${DEBIAN_RELEASE}-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs wireguard-tools wireguard-go iproute2 ca-certificates libcap2-bin \
 && rm -rf /var/lib/apt/lists/* \
 && setcap cap_net_admin=+ep "$(readlink -f /usr/bin/wg)" \
 && setcap cap_net_admin=+ep "$(readlink -f /usr/bin/wireguard-go)" \
 && setcap cap_net_admin=+ep "$(readlink -f /usr/sbin/ip 2>/dev/null || readlink -f /usr/bin/ip)" \
 && useradd --system --home-dir /var/lib/gatehouse --shell /usr/sbin/nologin gatehouse \
 && install -d -o gatehouse -g gatehouse -m 0750 /var/lib/gatehouse /run/wireguard
WORKDIR /opt/gatehouse
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules node_modules/
COPY --from=build /src/sidecar/package.json sidecar/
COPY --from=build /src/sidecar/dist sidecar/dist/
COPY --from=build /src/sidecar/common/package.json sidecar/common/
COPY --from=build /src/sidecar/common/dist sidecar/common/dist/
COPY --from=build /src/sidecar/ui/package.json sidecar/ui/
COPY --from=build /src/sidecar/ui/dist sidecar/ui/dist/
COPY --from=build /src/gateway/package.json gateway/
COPY --from=caddy /usr/bin/caddy bin/caddy

ENV GATEHOUSE_DATA_DIR=/var/lib/gatehouse \
    GATEHOUSE_CADDY_BIN=/opt/gatehouse/bin/caddy \
    GATEHOUSE_BIND=0.0.0.0 \
    WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 \
    NODE_ENV=production
VOLUME ["/var/lib/gatehouse"]
USER gatehouse
# 80/443: Caddy; 3000: admin UI and APIs; 51820/udp: WireGuard
EXPOSE 80 443 443/udp 3000 51820/udp
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+(process.env.GATEHOUSE_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--conditions=gatehouse-compiled", "/opt/gatehouse/sidecar/dist/main.js"]
