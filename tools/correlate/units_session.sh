#!/usr/bin/env bash
# A prepared measurement session for issue 14's unit questions (docs/correlation.md, "Measuring"):
#
#   GPUSIM=path/to/gpusim OUT=results/ bash tools/correlate/units_session.sh
#
# Like gpu_session.sh, the GPU machine needs no Rust and no network (measure.py --no-install).
# Stages, most valuable first, each under its own limit, packed into $OUT/results.tgz as they go:
#   0. the GPU's state; 1. traces/microbench/l2_partition and wgmma_issue with their timing
#   buffers dumped; 2. every microbenchmark trace (medians, every `out`/`lat` buffer dumped);
#   3. the Hopper GEMM specs at 2048³…8192³; 4. Nsight Compute L2/DRAM counters and clock
#   rates of hopper_ws_bf16 (8192³, 4096³) and hopper_ws_bf16_cluster2 (8192³).
here=$(dirname "$0")
work=${WORK:-/tmp/gpusim-units}
. "$here/session_common.sh"
measure=(python3 "$here/measure.py" --no-install)

stage "0 GPU state"
nvidia-smi -q > "$res/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem,clocks.sm --format=csv
python3 -c "import torch; p = torch.cuda.get_device_properties(0); print(p.name, p.multi_processor_count, 'SMs,', p.L2_cache_size, 'B of L2')"
mapfile -t mb < <(ls traces/microbench/*.yaml)
"$GPUSIM" export --out "$work/mb" "${mb[@]}" > "$res/export-mb.log" 2>&1 || { tail "$res/export-mb.log"; exit 1; }

stage "1 l2_partition, wgmma_issue"
timeout 90 "${measure[@]}" "$work/mb" --csv "$res/units.csv" --warmup 1 --repeats 3 \
    --only l2_partition wgmma_issue --dump lat_ smid_ warm_smid out_ > "$res/units.log" 2>&1
echo "exit $?"; grep -E '^\[|^error|mismatch' "$res/units.log" | head -n 20

stage "2 every microbenchmark"
timeout 120 "${measure[@]}" "$work/mb" --csv "$res/microbench.csv" --warmup 2 --repeats 10 --dump out lat LAT > "$res/microbench.log" 2>&1
echo "exit $?"; grep -c ',pass,' "$res/microbench.csv"; grep -E '^error|mismatch' "$res/microbench.log" | head -n 10

stage "3 GEMMs"
gemms=()
for spec in traces/gemm/hopper_ws_*/gemm.yaml traces/gemm/hgemm_mma_multistage/gemm.yaml; do gemms+=(--gemm "$spec"); done
"$GPUSIM" export --out "$work/gemm" "${gemms[@]}" --sizes 2048x2048x2048,4096x4096x4096,6144x6144x6144,8192x8192x8192 \
    > "$res/export-gemm.log" 2>&1 || { tail "$res/export-gemm.log"; exit 1; }
for name in hopper_ws_bf16 hopper_ws_bf16_cluster2 hopper_ws_tf32 hopper_ws_tf32_cluster2 hopper_ws_bf16_splitk hgemm_mma_multistage; do
    timeout 35 "${measure[@]}" "$work/gemm" --csv "$res/gemm-$name.csv" --warmup 20 --repeats 100 \
        --only "/$name/gemm.yaml:" > "$res/gemm-$name.log" 2>&1
    echo "-- $name (exit $?)"; grep -E '^\[|^error' "$res/gemm-$name.log" | head -n 8
done

stage "4 Nsight Compute"
full=lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
safe=lts__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_bytes.sum,gpu__time_duration.sum,lts__cycles_elapsed.avg.per_second
for w in "/hopper_ws_bf16/gemm.yaml:8192x" "/hopper_ws_bf16_cluster2/gemm.yaml:8192x" "/hopper_ws_bf16/gemm.yaml:4096x"; do
    echo "### $w" >> "$res/ncu.txt"
    timeout 60 ncu --clock-control none --launch-count 1 --metrics "$full" \
        python3 "$here/measure.py" --no-install "$work/gemm" --csv "$res/ncu-run.csv" --warmup 0 --repeats 1 --only "$w" > "$res/ncu-one.txt" 2>&1
    if grep -qi 'failed to find metric\|==ERROR==' "$res/ncu-one.txt"; then
        timeout 60 ncu --clock-control none --launch-count 1 --metrics "$safe" \
            python3 "$here/measure.py" --no-install "$work/gemm" --csv "$res/ncu-run.csv" --warmup 0 --repeats 1 --only "$w" > "$res/ncu-one.txt" 2>&1
    fi
    cat "$res/ncu-one.txt" >> "$res/ncu.txt"
    grep -E 'hit_rate|ltcfabric|dram__bytes_read|per_second|duration' "$res/ncu-one.txt" | head -n 12
done
stage "done"
