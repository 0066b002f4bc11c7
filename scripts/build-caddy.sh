#!/usr/bin/env bash
# Builds Gatehouse's custom Caddy (caddy-modules/cmd/caddy) to bin/caddy.
#
# Skips the build when bin/caddy is newer than every input under
# caddy-modules/: go.mod, go.sum, every non-test *.go file, and every
# directory (a directory's mtime changes when a file in it is added, removed
# or renamed). *_test.go files do not go into the binary and are ignored.
# Versions come from caddy-modules/go.mod; nothing is fetched at @latest.
#
# Usage: scripts/build-caddy.sh [--force]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/caddy-modules"
out="$root/bin/caddy"

force=0
case "${1:-}" in
  "") ;;
  -f|--force) force=1 ;;
  -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "build-caddy: unknown argument: $1 (usage: $0 [--force])" >&2; exit 2 ;;
esac

if [[ ! -f "$src/go.mod" ]]; then
  echo "build-caddy: $src/go.mod not found" >&2
  exit 1
fi
if ! command -v go >/dev/null 2>&1; then
  echo "build-caddy: the 'go' command is not on PATH (Go $(sed -n 's/^go //p' "$src/go.mod") or newer is needed)" >&2
  exit 1
fi

if [[ $force -eq 0 && -x "$out" ]]; then
  changed="$(find "$src" \( -type d -o -name go.mod -o -name go.sum -o \( -name '*.go' ! -name '*_test.go' \) \) \
    -newer "$out" -print -quit)"
  if [[ -z "$changed" ]]; then
    echo "build-caddy: bin/caddy is up to date (newer than every input under caddy-modules/), skipped the build"
    exit 0
  fi
  echo "build-caddy: ${changed#"$root"/} is newer than bin/caddy, rebuilding"
fi

mkdir -p "$root/bin"
echo "build-caddy: go build -trimpath ./cmd/caddy -> bin/caddy ($(go version | cut -d' ' -f3), first build takes a few minutes)"
start=$SECONDS
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# Build into a temporary file so that a failed or interrupted build never
# leaves a fresh-looking bin/caddy behind.
(cd "$src" && go build -trimpath -o "$tmp" ./cmd/caddy)
mv -f "$tmp" "$out"
trap - EXIT
echo "build-caddy: built bin/caddy in $((SECONDS - start))s ($("$out" version | head -n1))"
