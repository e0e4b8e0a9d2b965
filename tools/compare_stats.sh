#!/bin/bash
# Run every trace manifest with two gpusim binaries on each config and report any difference
# in their `--stats-json` (wall-time keys removed). For changes that must not move a result
# (speed work): every line should read `same`; `norun` is a manifest both binaries refuse on
# that config, with the same exit code.
#
#   tools/compare_stats.sh OLD_BINARY NEW_BINARY OUT_DIR CONFIG...
#   e.g. tools/compare_stats.sh /tmp/gpusim-before target/release/gpusim /tmp/cmp tiny volta-v100 hopper-h100
#
# About 10 minutes for the three configs here (2 cores). Summary in OUT_DIR/summary.txt.
set -u
if [ $# -lt 4 ]; then
  sed -n 2,10p "$0"; exit 2
fi
OLD=$(realpath "$1"); NEW=$(realpath "$2"); OUT=$(realpath -m "$3"); shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"; : > "$OUT/summary.txt"
cd "$ROOT"
for cfg in "$@"; do
  for m in $(find traces -name "*.yaml" ! -name gemm.yaml | sort); do
    grep -q "^launches:" "$m" || continue
    tag=$(echo "$m" | tr '/' '_')_$cfg
    timeout 300 "$OLD" run "$m" --config "configs/$cfg.yaml" --stats-json "$OUT/$tag.old.json" >/dev/null 2>&1; ro=$?
    timeout 300 "$NEW" run "$m" --config "configs/$cfg.yaml" --stats-json "$OUT/$tag.new.json" >/dev/null 2>&1; rn=$?
    if [ "$ro" != "$rn" ]; then echo "DIFF exit code $m $cfg: $ro vs $rn" >> "$OUT/summary.txt"; continue; fi
    if [ ! -f "$OUT/$tag.old.json" ]; then echo "norun $m $cfg (exit $ro)" >> "$OUT/summary.txt"; continue; fi
    python3 - "$OUT/$tag.old.json" "$OUT/$tag.new.json" "$m $cfg" >> "$OUT/summary.txt" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("wall_seconds", "warp_instructions_per_second")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(f))) for f in sys.argv[1:3])
print(("same " if a == b else "DIFF ") + sys.argv[3])
PY
    rm -f "$OUT/$tag.old.json" "$OUT/$tag.new.json"
  done
done
echo "$(grep -c '^same' "$OUT/summary.txt") same, $(grep -c '^DIFF' "$OUT/summary.txt") different, $(grep -c '^norun' "$OUT/summary.txt") refused by both"
grep '^DIFF' "$OUT/summary.txt" | head -20
