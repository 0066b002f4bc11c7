#!/usr/bin/env bash
# Comments and messages stand on their own: no citation a reader of this repository cannot open
# (the interface notes the product was first built from, issue numbers of a tracker, sections of an
# older README). Part of npm run lint.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pattern='\bSPEC\b|SPEC\.md|\b[Ii]ssues? #?[0-9]+\b|README(.s)? "'
if hits=$(grep -rnE "$pattern" --include='*.ts' --include='*.tsx' --include='*.js' --include='*.mjs' --include='*.go' --include='*.sh' \
  --exclude-dir=node_modules --exclude-dir=dist --exclude-dir=.git --exclude=lint-comments.sh \
  sidecar gateway client test scripts caddy-modules configs 2>/dev/null); then
  echo "comments that cite what a reader cannot open (name the docs/ page or say it in place):" >&2
  echo "$hits" >&2
  exit 1
fi
