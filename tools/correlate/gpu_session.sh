#!/usr/bin/env bash
# One prepared measurement session on a lent GPU machine (docs/correlation.md, "Measuring").
#
#   GPUSIM=path/to/gpusim OUT=results/ bash tools/correlate/gpu_session.sh
#
# The GPU machine needs no Rust: GPUSIM is a gpusim binary built elsewhere (x86-64 Linux,
# stripped to travel light). The machine may have no network: measure.py runs with
# --no-install, so cuda-python (or cuda-bindings), nvidia-ml-py and numpy must be there.
# Stages run most-valuable first, each under its own time limit, writing under $OUT (results.tgz) as they
# go, so that a session cut short still returns what it measured:
#   0. the GPU's state (nvidia-smi -q) and package versions;
#   1. a smoke run (one trace, one cluster GEMM): if nothing passes, stop here;
#   2. every GEMM spec at 512³…8192³, 20 warm-ups and 100 timed launches each (one measure.py
#      per spec, so that a kernel that hangs on the hardware costs only its own time limit);
#   3. cuBLAS under sustained load: settled clock and power, random vs zero operands;
#   4. every trace manifest that runs to completion.
here=$(dirname "$0")
work=${WORK:-/tmp/gpusim-correlate}
. "$here/session_common.sh"

stage "0 GPU state"
nvidia-smi -q > "$res/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem,clocks.sm,temperature.gpu --format=csv
python3 - <<'EOF'
import importlib.metadata as m
for p in ("cuda-bindings", "cuda-python", "nvidia-ml-py", "numpy", "torch"):
    try:
        print(p, m.version(p))
    except m.PackageNotFoundError:
        print(p, "missing")
EOF

sizes=512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,6144x6144x6144,8192x8192x8192
gemms=()
for spec in traces/gemm/*/gemm.yaml; do gemms+=(--gemm "$spec"); done
"$GPUSIM" export --out "$work/gemm" "${gemms[@]}" --sizes "$sizes" > "$res/export-gemm.log" 2>&1 || { cat "$res/export-gemm.log"; exit 1; }
mapfile -t manifests < <(find traces -name '*.yaml' ! -name gemm.yaml | sort)
"$GPUSIM" export --out "$work/traces" "${manifests[@]}" > "$res/export-traces.log" 2>&1 || { tail "$res/export-traces.log"; exit 1; }

stage "1 smoke"
timeout 45 python3 "$here/measure.py" --no-install "$work/traces" --csv "$res/smoke.csv" --repeats 3 \
    --only traces/kernels/vecadd/vecadd.yaml 2>&1 | tail -n 5
timeout 45 python3 "$here/measure.py" --no-install "$work/gemm" --csv "$res/smoke-gemm.csv" --repeats 3 \
    --only hopper_ws_bf16_cluster2/gemm.yaml:512x 2>&1 | tail -n 20
if ! grep -q ',pass,' "$res/smoke.csv" "$res/smoke-gemm.csv" 2>/dev/null; then
    echo "smoke run: nothing passed; stopping"
    exit 1
fi

stage "2 GEMMs"
for name in hopper_ws_bf16 hopper_ws_bf16_cluster2 hopper_ws_tf32 hopper_ws_tf32_cluster2 \
            hopper_ws_bf16_splitk hgemm_mma_multistage sgemm_simt; do
    timeout 35 python3 "$here/measure.py" --no-install "$work/gemm" --csv "$res/gemm-$name.csv" \
        --warmup 20 --repeats 100 --only "/$name/gemm.yaml:" > "$res/gemm-$name.log" 2>&1
    echo "-- $name (exit $?)"; grep -E '^\[|^error' "$res/gemm-$name.log"
done

stage "3 sustained cuBLAS"
timeout 60 python3 "$here/power_probe.py" --out "$res/power.csv" 2>&1 | tail -n 12

stage "4 traces"
timeout 120 python3 "$here/measure.py" --no-install "$work/traces" --csv "$res/traces.csv" > "$res/traces.log" 2>&1
grep -c ',pass,' "$res/traces.csv"
grep -E '^error|mismatch' "$res/traces.log" | head -n 30
stage "done"
