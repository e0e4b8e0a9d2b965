#!/usr/bin/env bash
# Regenerates the speed table of docs/performance.md: every workload on 1 and 2 threads (warp
# instructions, cycles, wall time, rate, peak memory), then the sampled GEMM predictions
# against their full runs.
#
#   bash benches/speed.sh            # about 25 minutes on the 2-core development machine
#   bash benches/speed.sh --quick    # the small workloads only (about 3 minutes)
#   FULL_8192=1 bash benches/speed.sh  # also the full 8192³ Hopper GEMM (20+ minutes more)
#
# Wall times are the simulator's own (stats `wall_seconds`, gemm `sim_seconds`); peak memory
# is GNU time's maximum resident set. Run it on a quiet machine: the rates are lower bounds.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
cargo build --release -q -p gpusim
G=$PWD/target/release/gpusim
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "speed.sh needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=$work/rows.tsv
: >"$rows"

# run NAME CONFIG THREADS MANIFEST: one `gpusim run`, a row of the table.
run() {
  local name=$1 config=$2 threads=$3 manifest=$4
  local cfg_args=()
  [[ $config != tiny ]] && cfg_args=(--config "configs/$config.yaml")
  echo "  $name ($config, $threads thread(s))" >&2
  $TIME -f %M -o "$work/rss" "$G" run "$manifest" "${cfg_args[@]}" --threads "$threads" \
    --stats-json "$work/s.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  python3 - "$name" "$config" "$threads" "$work/s.json" "$(tail -1 "$work/rss")" >>"$rows" <<'EOF'
import json, sys
name, config, threads, path, rss = sys.argv[1:]
s = json.load(open(path))
print("\t".join([name, config, threads, str(s["warp_instructions"]), str(s["cycles"]),
                 f'{s["wall_seconds"]:.2f}', f'{s["warp_instructions_per_second"]:.0f}', rss, ""]))
EOF
}

# gemm NAME CONFIG THREADS SPEC SIZE [--sample]: one `gpusim gemm` size, a row.
gemm() {
  local name=$1 config=$2 threads=$3 spec=$4 size=$5
  shift 5
  echo "  $name $size ($config, $threads thread(s)) $*" >&2
  $TIME -f %M -o "$work/rss" "$G" gemm "$spec" --config "configs/$config.yaml" --sizes "$size" \
    --skip-tensor-math --verify-up-to 0 --threads "$threads" --csv "$work/g.csv" "$@" \
    >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  python3 - "$name $size" "$config" "$threads" "$work/g.csv" "$(tail -1 "$work/rss")" >>"$rows" <<'EOF'
import csv, sys
name, config, threads, path, rss = sys.argv[1:]
r = next(csv.DictReader(open(path)))
sim = float(r["sim_seconds"])
rate = float(r["warp_instructions_per_second"])
sampled = r["sampled"] == "true"
err = f'±{100 * float(r["sample_error"]):.2f}%' if r["sample_error"] else ""
note = f'sampled: {r["simulated_ctas"]}/{r["ctas"]} CTAs {err}' if sampled else ""
insts = r["simulated_warp_instructions"]
print("\t".join([name, config, threads, insts, r["cycles"], f"{sim:.2f}", f"{rate:.0f}",
                 rss, note]))
EOF
}

echo "speed.sh: simulating (rows as they finish)" >&2
for t in 1 2; do
  run "vecadd 1M" volta-v100 $t benches/workloads/vecadd_1m.yaml
  run "mandelbrot" tiny $t traces/kernels/mandelbrot/mandelbrot.yaml
  run "bitonic_sort" tiny $t traces/kernels/bitonic_sort/bitonic_sort.yaml
  run "sgemm_tiled" tiny $t traces/kernels/sgemm_tiled/sgemm_tiled.yaml
done
if [[ $quick == 0 ]]; then
  HW=traces/gemm/hopper_ws_bf16_cluster2/gemm.yaml
  HG=traces/gemm/hgemm_mma_multistage/gemm.yaml
  for t in 1 2; do
    gemm "hgemm_mma_multistage" hopper-h100 $t $HG 1024x1024x1024
    gemm "hopper_ws_bf16_cluster2" hopper-h100 $t $HW 2048x2048x2048
  done
  gemm "hopper_ws_bf16_cluster2" hopper-h100 1 $HW 8192x8192x1024
  gemm "hopper_ws_bf16_cluster2" hopper-h100 1 $HW 8192x8192x1024 --sample
  gemm "hopper_ws_bf16_cluster2" hopper-h100 2 $HW 8192x8192x1024 --sample
  gemm "hopper_ws_bf16_cluster2" hopper-h100 1 $HW 8192x8192x8192 --sample
  if [[ -n "${FULL_8192:-}" ]]; then
    gemm "hopper_ws_bf16_cluster2" hopper-h100 2 $HW 8192x8192x8192
  fi
fi

table=$work/table.md
python3 - "$rows" "$(date -u +%Y-%m-%d)" "$(nproc)" >"$table" <<'EOF'
import sys
rows, day, cores = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"Measured {day} by `bash benches/speed.sh` on {cores} cores (release build).")
print()
print("| workload | config | threads | warp insts | cycles | wall s | warp insts/s | peak MB | note |")
print("|---|---|---|---|---|---|---|---|---|")
for line in open(rows):
    name, config, threads, insts, cycles, wall, rate, rss, note = line.rstrip("\n").split("\t")
    print(f"| {name} | {config} | {threads} | {int(insts):,} | {int(cycles):,} | {wall} "
          f"| {int(rate):,} | {int(rss) // 1024:,} | {note} |")
print()
print("Published rates, for scale (other machines): Accel-Sim 12.5 K warp insts/s; MGPUSim "
      "28 K serial, 2.5× on 4 cores; Accel-Sim with OpenMP over SMs 1.72× on 2 threads, 7× "
      "on 24 (Huerta et al., arXiv 2502.14691).")
EOF
doc=docs/performance.md
python3 - "$doc" "$table" <<'EOF'
import sys
doc, table = sys.argv[1], sys.argv[2]
text = open(doc).read()
begin, end = "<!-- speed-table:begin -->", "<!-- speed-table:end -->"
a, b = text.index(begin) + len(begin), text.index(end)
open(doc, "w").write(text[:a] + "\n" + open(table).read() + text[b:])
EOF
cat "$table"
echo "speed.sh: wrote the table into $doc" >&2
