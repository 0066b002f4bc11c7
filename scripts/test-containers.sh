#!/usr/bin/env bash
# Builds Gatehouse's container images (Caddy, the server, the gateway companion) and runs them, as root, with Debian's buildah and podman
# (no Docker engine and no image registry here). A section of scripts/test.sh (CI).
#   1. Base images, made locally: debian:trixie-slim with mmdebstrap from Debian's mirror, and
#      golang:<go>-trixie as that plus this machine's Go (/usr/local/go). Cached between runs, keyed by
#      their inputs (recipe, this machine's extra CA certificates, Go version), rebuilt after 30 days.
#   2. `buildah bud` of xcaddy.Dockerfile (our Caddy), Dockerfile (the server) and gateway/Dockerfile
#      (the gateway companion) with those images as the FROM build arguments, standard Dockerfile
#      syntax otherwise. Build layers are cached; the host's Go module cache and npm cache are mounted
#      over the Dockerfiles' cache mounts, so nothing is downloaded twice.
#   3. test/containers/*.test.ts: the compose file validated with compose-go, then the server image
#      run with podman (the compose service's capabilities, device and sysctls) in a network
#      namespace of its own, a real WireGuard peer and a route served by Caddy in the container,
#      SIGTERM, and a second start on the same data volume; the gateway image run with podman in a
#      namespace of its own on the home-LAN side of a gateway created through the API, a route to a
#      LAN app through Caddy in the server container, heartbeat, HEALTHCHECK, SIGTERM.
# Cache (base image tarballs, container storage, Go build cache): $GATEHOUSE_CI_CACHE, default
# /var/cache/gatehouse-ci, outside the clone; an absent or empty one is simply rebuilt (a cold run).
# Full build logs: test-results/containers-*.log.
#   bash scripts/test-containers.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS
step() { echo "-- containers: $1 (+$((SECONDS - start))s)"; }

if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the container test needs root (buildah, podman, network namespaces)" >&2
  exit 0
fi
missing=()
for tool in buildah podman mmdebstrap runc go node; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  echo "containers: missing tools: ${missing[*]} (SETUP_TEST=1 bash scripts/setup.sh installs them)" >&2
  exit 1
fi

cache="${GATEHOUSE_CI_CACHE:-/var/cache/gatehouse-ci}"
mkdir -p "$cache/base" "$cache/go-build" test-results
# Our own container configuration and storage, inside the cache directory:
# - no default rlimits (this sandbox refuses to raise them), runc (crun refuses its hybrid cgroups),
#   cgroupfs (no systemd);
# - the images and build layers under $cache/storage (a cold run is an empty cache directory).
cat > "$cache/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
cat > "$cache/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$cache/storage"
runroot = "/run/gatehouse-ci/$(echo "$cache" | sha256sum | cut -c1-12)"
EOF
export CONTAINERS_CONF="$cache/containers.conf" CONTAINERS_STORAGE_CONF="$cache/storage.conf"

# ---- 1. base images ------------------------------------------------------------------------------
suite=trixie
mirrors=("deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian $suite-updates main" "deb http://deb.debian.org/debian-security $suite-security main")
mmopts=(--variant=minbase --include=ca-certificates
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
  # as the official debian:*-slim images: apt deletes the packages it downloaded once installed
  # (else every image keeps ~118 MB of .deb files in /var/cache/apt)
  --customize-hook='printf "%s\n" "DPkg::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };" "APT::Update::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };" "Dir::Cache::pkgcache \"\";" "Dir::Cache::srcpkgcache \"\";" > "$1/etc/apt/apt.conf.d/docker-clean"')
# This machine's own CA certificates (a TLS-inspecting egress proxy's, for the Go module proxy and the
# npm registry) go into the local base images, so that builds inside them trust what the host trusts.
shopt -s nullglob
extra_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
debian_key=$( { echo "debian-base v1 $suite"; printf '%s\n' "${mmopts[@]}" "${mirrors[@]}"; ((${#extra_cas[@]})) && cat "${extra_cas[@]}"; } | sha256sum | cut -c1-16)
debian_image=localhost/gatehouse-ci/debian:$suite-slim
debian_tar="$cache/base/debian-$suite-$debian_key.tar"

image_key() { podman image inspect --format '{{index .Labels "org.gatehouse.ci.key"}}' "$1" 2>/dev/null || true; }

step "base image $debian_image (key $debian_key)"
find "$cache/base" -name 'debian-*.tar' -mtime +30 -delete
if [[ "$(image_key "$debian_image")" != "$debian_key" ]]; then
  if [[ ! -s "$debian_tar" ]]; then
    echo "mmdebstrap $suite (minbase) from Debian's mirror -> $debian_tar"
    rm -rf "$cache"/base/debian-"$suite"-*.tar
    cas_hook=()
    if ((${#extra_cas[@]})); then
      cas_hook=(--customize-hook="cp ${extra_cas[*]} \"\$1/usr/local/share/ca-certificates/\" && chroot \"\$1\" update-ca-certificates >/dev/null")
    fi
    # (mmdebstrap picks the output format by the name's extension: .tar)
    nice -n 10 mmdebstrap --quiet "${mmopts[@]}" "${cas_hook[@]}" "$suite" "$debian_tar.tmp.tar" "${mirrors[@]}" > test-results/containers-base.log 2>&1 \
      || { tail -30 test-results/containers-base.log; exit 1; }
    mv "$debian_tar.tmp.tar" "$debian_tar"
  fi
  podman import --quiet --change "LABEL org.gatehouse.ci.key=$debian_key" "$debian_tar" "$debian_image" >/dev/null
else
  echo "cached"
fi

goroot="$(go env GOROOT)"
go_version="$(go env GOVERSION)"            # go1.26.8
go_minor="$(sed -E 's/^go([0-9]+\.[0-9]+).*/\1/' <<<"$go_version")"
needed="$(sed -n 's/^go //p' caddy-modules/go.mod)"
if [[ "$(printf '%s\n%s\n' "$needed" "${go_version#go}" | sort -V | head -1)" != "$needed" ]]; then
  echo "containers: caddy-modules/go.mod needs Go $needed, this machine has $go_version" >&2
  exit 1
fi
golang_image=localhost/gatehouse-ci/golang:$go_minor-$suite
golang_key=$(echo "golang-base v1 $debian_key $go_version $goroot" | sha256sum | cut -c1-16)
step "base image $golang_image ($go_version from $goroot, key $golang_key)"
if [[ "$(image_key "$golang_image")" != "$golang_key" ]]; then
  ctr=$(buildah from --quiet "$debian_image")
  buildah copy --quiet "$ctr" "$goroot" /usr/local/go >/dev/null
  buildah config --env GOPATH=/go --env GOLANG_VERSION="${go_version#go}" \
    --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --workingdir /go --label org.gatehouse.ci.key="$golang_key" "$ctr"
  buildah commit --quiet --rm "$ctr" "$golang_image" >/dev/null
else
  echo "cached"
fi

# ---- 2. the images -------------------------------------------------------------------------------
caddy_image=localhost/gatehouse-caddy:ci
server_image=localhost/gatehouse:ci
gateway_image=localhost/gatehouse-gateway:ci
gomodcache="$(go env GOMODCACHE)"
npmcache="$(npm config get cache 2>/dev/null || echo "$HOME/.npm")"
mkdir -p "$gomodcache" "$npmcache"
# Standard `docker build` semantics; what is buildah's own stays on this command line: chroot
# isolation (no nested namespaces here), docker format (keeps HEALTHCHECK), the layer cache, stages in
# parallel, and the host's caches mounted over the Dockerfiles' `RUN --mount=type=cache` targets.
bud=(nice -n 10 buildah bud --isolation chroot --format docker --layers --jobs 2)
# The step lines (and which came from the cache) here, everything in the log.
show_steps() { grep --line-buffered -E '^(\[[0-9]+/[0-9]+\] )?STEP [0-9]+/[0-9]+|^--> Using cache|^Successfully tagged|[Ee]rror' | cut -c1-160; }

# Three builds at the same time: the Caddy image (Go, both cores), the server's stages that do not
# need it (apt, npm ci with sqlite3's compile, tsc and vite: mostly one core, disk and network) and
# the gateway image (apt, npm ci without install scripts, one esbuild bundle: little CPU). Then the
# server image itself, whose last stage copies Caddy; its other stages come from the layer cache.
build() { # log-name, buildah bud arguments...
  local log="test-results/containers-$1.log"
  shift
  if ! "${bud[@]}" "$@" > "$log" 2>&1; then
    echo "containers: buildah bud $* failed; the end of $log:" >&2
    tail -40 "$log" >&2
    return 1
  fi
}
caddy_args=(-f xcaddy.Dockerfile --build-arg GO_IMAGE="$golang_image" --build-arg DEBIAN_IMAGE="$debian_image"
  -v "$gomodcache:/go/pkg/mod" -v "$cache/go-build:/root/.cache/go-build" -t "$caddy_image" .)
server_args=(-f Dockerfile --build-arg DEBIAN_IMAGE="$debian_image" --build-arg CADDY_IMAGE="$caddy_image" -v "$npmcache:/root/.npm")
gateway_args=(-f gateway/Dockerfile --build-arg DEBIAN_IMAGE="$debian_image" -v "$npmcache:/root/.npm" -t "$gateway_image" .)

step "build $caddy_image (xcaddy.Dockerfile), the server's stages prod-deps and build (Dockerfile) and $gateway_image (gateway/Dockerfile), side by side"
t0=$SECONDS
build caddy-build "${caddy_args[@]}" &
caddy_pid=$!
{ build server-stages "${server_args[@]}" --target prod-deps . && build server-stages-2 "${server_args[@]}" --target build .; } &
stages_pid=$!
# (its own time: the lane prints it when it ends)
{ build gateway-build "${gateway_args[@]}" && echo "built $gateway_image in $((SECONDS - t0))s"; } &
gateway_pid=$!
failed=0
wait "$caddy_pid" || failed=1
echo "built $caddy_image in $((SECONDS - t0))s"
show_steps < test-results/containers-caddy-build.log
wait "$stages_pid" || failed=1
echo "built the server's prod-deps and build stages in $((SECONDS - t0))s"
cat test-results/containers-server-stages.log test-results/containers-server-stages-2.log 2>/dev/null | show_steps
wait "$gateway_pid" || failed=1
show_steps < test-results/containers-gateway-build.log
((failed == 0)) || exit 1

step "build $server_image (Dockerfile)"
t0=$SECONDS
build server-build "${server_args[@]}" -t "$server_image" . || exit 1
# buildah leaves the working container of a stage that is only FROM (the Dockerfile's `caddy`) mounted
buildah rm --all >/dev/null
show_steps < test-results/containers-server-build.log
echo "built $server_image in $((SECONDS - t0))s"
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' --filter reference='localhost/gatehouse*'

# ---- 3. run them ---------------------------------------------------------------------------------
step "test/containers (compose file, server image run, gateway image run)"
status=0
GATEHOUSE_TEST_SERVER_IMAGE="$server_image" GATEHOUSE_TEST_CADDY_IMAGE="$caddy_image" GATEHOUSE_TEST_GATEWAY_IMAGE="$gateway_image" \
  node --import tsx --test --test-concurrency=1 test/containers/*.test.ts || status=1

# Keep the storage from growing: images and build layers nobody used for 10 days go.
podman image prune --force --filter until=240h >/dev/null 2>&1 || true
step "done"
exit $status
