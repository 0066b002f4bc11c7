#!/usr/bin/env bash
# Runs the sidecar's unit and integration tests with node's test runner (TypeScript through tsx).
# Usage: scripts/test-sidecar.sh [test files...]   (default: every sidecar/test/**/*.test.ts)
set -euo pipefail
cd "$(dirname "$0")/../sidecar"
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
exec node --import tsx --test --test-concurrency=1 "${files[@]}"
