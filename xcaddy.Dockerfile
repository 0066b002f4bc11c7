# syntax=docker/dockerfile:1
#
# Gatehouse's custom Caddy for container users: the same binary that
# scripts/build-caddy.sh builds to bin/caddy, i.e. `go build -trimpath` of
# caddy-modules/cmd/caddy with every version taken from caddy-modules/go.mod and
# go.sum (caddy v2.11.9, mholt/caddy-l4 v0.1.2, mholt/caddy-ratelimit v0.1.0 and
# the Gatehouse modules). A plain `go build` of our own main package is used
# instead of xcaddy so that go.sum, not a build-time resolver, fixes every
# dependency.
#
# Build from the repository root (BuildKit, the default builder, sends only
# caddy-modules/ as context):
#   docker build -f xcaddy.Dockerfile -t gatehouse-caddy .
#
# The image starts Caddy with an empty config; the Gatehouse sidecar pushes
# the real config through the admin API (POST /load). The admin endpoint
# listens on localhost:2019 inside the container, so the sidecar must share
# Caddy's network namespace (e.g. compose `network_mode: "service:caddy"`), or
# set CADDY_ADMIN, e.g. `unix//run/caddy/admin.sock` on a volume both mount.

# The base images are build arguments (a mirror, a pinned digest, or locally made images, as
# scripts/test-containers.sh uses where no registry is reachable).
ARG GO_IMAGE=golang:1.26-trixie
ARG DEBIAN_IMAGE=debian:trixie-slim

FROM ${GO_IMAGE} AS build
# Static binary; never let `go` fetch another toolchain or edit go.mod/go.sum.
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
WORKDIR /src/caddy-modules

# Dependencies first, so that source edits reuse this layer.
COPY caddy-modules/go.mod caddy-modules/go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download && go mod verify

COPY caddy-modules/ ./
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -o /out/caddy ./cmd/caddy \
 && /out/caddy version \
 && /out/caddy list-modules > /out/modules.txt \
 && grep -qx 'http.handlers.gatehouse_hostroute' /out/modules.txt \
 && grep -qx 'http.handlers.rate_limit' /out/modules.txt \
 && grep -qx 'caddy.storage.gatehouse_postgres' /out/modules.txt \
 && grep -qx 'layer4' /out/modules.txt

FROM ${DEBIAN_IMAGE}
# ca-certificates: ACME and TLS to upstreams; media-types: /etc/mime.types for
# file_server; libcap2-bin: setcap, so the image also runs with --user.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates media-types libcap2-bin \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /config/caddy /data/caddy /etc/caddy /srv

COPY --from=build /out/caddy /usr/bin/caddy
RUN setcap cap_net_bind_service=+ep /usr/bin/caddy \
 && caddy version

# Same layout as the official Caddy image: certificates, the local CA and
# other state under /data, autosaved config (disabled by Gatehouse) under /config.
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
VOLUME ["/config", "/data"]
WORKDIR /srv

LABEL org.opencontainers.image.title="Gatehouse Caddy" \
      org.opencontainers.image.description="Caddy v2.11.9 with caddy-l4, caddy-ratelimit and the Gatehouse modules"

EXPOSE 80 443 443/udp
STOPSIGNAL SIGTERM
CMD ["caddy", "run"]
