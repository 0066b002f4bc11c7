#!/usr/bin/env bash
# The reliability and security suite: faults, load, bad input and authorisation, secrets
# at rest. Runs test/reliability/*.test.ts one file at a time (several need root: network
# namespaces, wireguard-go, a loop-mounted filesystem) and prints one table of the figures they
# recorded (test/reliability/lib/figures.ts). Needs the set-up of `npm test` (scripts/setup.sh).
#   bash scripts/test-reliability.sh [test/reliability/<file>.test.ts ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1
export RELIABILITY_FIGURES="$root/test-results/reliability-figures.jsonl"
mkdir -p test-results && : > "$RELIABILITY_FIGURES"
if (($#)); then files=("$@"); else mapfile -t files < <(find test/reliability -maxdepth 1 -name '*.test.ts' | sort); fi
status=0
if ((${#files[@]})); then
  node --import tsx --test --test-concurrency=1 "${files[@]}" || status=1
fi
echo "== reliability figures"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const rows = [["test", "figure", "value", "target", "met"], ...lines.map((f) => [f.test, f.figure, f.value, f.target ?? "", f.ok === undefined ? "" : f.ok ? "yes" : "NO"])];
const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
for (const [i, r] of rows.entries()) {
  console.log("| " + r.map((c, j) => String(c).padEnd(w[j])).join(" | ") + " |");
  if (i === 0) console.log("|" + w.map((n) => "-".repeat(n + 2)).join("|") + "|");
}
if (!lines.length) console.log("(no figures recorded)");
' "$RELIABILITY_FIGURES"
exit $status
