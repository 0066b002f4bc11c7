#!/usr/bin/env bash
# Builds the compiled sidecar (tsc) and the admin app (vite), each only when an input is newer than
# its last completed build. Called by scripts/setup.sh; tests that run the sidecar as it ships (the
# compiled form) call it with `sidecar` to build only that part.
#   bash scripts/build-app.sh [sidecar|ui]   (both when no argument)
#   SETUP_FORCE_BUILD=1                      builds even when the outputs look up to date
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
only=${1:-}

# build_if_stale <what> <stamp> <command> <outputs...> -- <inputs...>: runs the build unless its
# outputs exist and the stamp is newer than every input file and directory (a directory's mtime
# changes when a file in it is added, removed or renamed). The stamp is written only after a
# successful build and carries the time the build started, so an edit made during a build counts as
# newer. It lives in the output directory: removing the output removes it, and `vite build` empties
# its dist, so a build run by other means (or one that failed) counts as stale.
build_if_stale() {
  local what=$1 stamp=$2 cmd=$3
  shift 3
  local outputs=()
  while [[ $# -gt 0 && "$1" != -- ]]; do outputs+=("$1"); shift; done
  shift
  local changed="" o
  if [[ "${SETUP_FORCE_BUILD:-0}" == 1 ]]; then
    changed="SETUP_FORCE_BUILD=1"
  elif [[ ! -f "$stamp" ]]; then
    changed="no completed build: $stamp missing"
  else
    for o in "${outputs[@]}"; do [[ -e "$o" ]] || { changed="$o missing"; break; }; done
    [[ -n "$changed" ]] || changed="$(find "$@" -newer "$stamp" -print -quit 2>/dev/null || true)"
    [[ -z "$changed" ]] || changed="$changed is newer than the last build"
  fi
  if [[ -z "$changed" ]]; then
    echo "setup: $what is up to date (its outputs are newer than every input), skipped the build"
    return 0
  fi
  echo "setup: building $what ($changed)"
  local started
  started="$(mktemp)"
  if ! eval "$cmd"; then rm -f "$started"; return 1; fi
  touch -r "$started" "$stamp"
  rm -f "$started"
}

# Inputs both builds share: the shared package (compiled with the sidecar, bundled into the app),
# the root manifest and the lockfile (compiler, bundler and library versions).
shared=(sidecar/common/src sidecar/common/tsconfig.json sidecar/common/package.json package.json package-lock.json)
[[ "$only" == ui ]] || build_if_stale "the sidecar (tsc)" sidecar/dist/.build-stamp "npm run -s -w @gatehouse/sidecar build" \
  sidecar/dist/main.js sidecar/common/dist -- \
  sidecar/src sidecar/tsconfig.json sidecar/package.json "${shared[@]}"
[[ "$only" == sidecar ]] || build_if_stale "the admin app (vite)" sidecar/ui/dist/.build-stamp "npm run -s -w @gatehouse/ui build" \
  sidecar/ui/dist/index.html -- \
  sidecar/ui/src sidecar/ui/public sidecar/ui/index.html sidecar/ui/vite.config.ts sidecar/ui/tsconfig.json \
  sidecar/ui/package.json sidecar/ui/scripts "${shared[@]}"
