#!/usr/bin/env bash
# A prepared measurement session for a GEMM tile's phases (docs/correlation.md, "Measuring"):
#
#   GPUSIM=path/to/gpusim OUT=results/ bash tools/correlate/phases_session.sh
#
# Runs traces/microbench/gemm_phases.yaml (hopper_ws_bf16's kernel with clock stamps, K = 128
# and 512) and gemm_phases_cluster2.yaml (the cluster-of-2 kernel, K = 128) once each with
# their stamps dumped (`measure.py --dump stamps tile_c --dump-dir`), 5 warm-ups and 20 timed
# launches, then prints each wave's phases (tools/correlate/gemm_phases.py). A few seconds of
# GPU time; like the other sessions it needs no Rust and no network.
here=$(dirname "$0")
work=${WORK:-/tmp/gpusim-phases}
. "$here/session_common.sh"

stage "1 gemm_phases"
"$GPUSIM" export --out "$work/plan" traces/microbench/gemm_phases.yaml traces/microbench/gemm_phases_cluster2.yaml \
    > "$res/export.log" 2>&1 || { tail "$res/export.log"; exit 1; }
timeout 120 python3 "$here/measure.py" --no-install "$work/plan" --csv "$res/gemm_phases.csv" --warmup 5 --repeats 20 \
    --dump stamps tile_c --dump-dir "$res/dump" > "$res/gemm_phases.log" 2>&1
echo "exit $?"; grep -E '^\[|^error|mismatch' "$res/gemm_phases.log"
for name in gemm_phases gemm_phases_cluster2; do
    mkdir -p "$res/$name"
    for f in "$res"/dump/*"${name}.yaml__"stamps_k*.npy; do cp "$f" "$res/$name/${f##*__}"; done
    echo "-- $name"; python3 "$here/gemm_phases.py" "$res/$name"
done
stage "done"
