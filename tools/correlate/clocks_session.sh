#!/usr/bin/env bash
# A prepared measurement session for the SM clock and the cycles a GEMM launch takes
# (docs/correlation.md, "Measuring"):
#
#   GPUSIM=path/to/gpusim OUT=results/ bash tools/correlate/clocks_session.sh
#
# NVML's SM clock reading (measure.py's sm_clock_mhz) is the clock the driver asked for; under a
# dense tensor load the SMs run slower than that within a launch. Nsight Compute counts the
# cycles each unit's clock ticked over the launch (`*__cycles_elapsed`), so the clock a launch
# really ran at is cycles / duration, and the model can be compared in cycles. Like
# gpu_session.sh the GPU machine needs no Rust and no network. Stages, each under its own limit,
# packed into $OUT/results.tgz as they go:
#   0. the GPU's state and the counters this Nsight Compute offers;
#   1. every Hopper GEMM spec at 4096³, 6144³, 8192³ (and hgemm/sgemm at one size): the 41st
#      launch (after 40 warm-ups), unlocked clocks — cycles, clocks, tensor-pipe activity;
#   2. the same launch after 300 warm-ups (the settled, power-limited clock) for the two bf16
#      kernels at 8192³, and with `--clock-control base` (SMs locked to the base clock by
#      Nsight Compute for the launch) at 4096³ and 8192³: how the cycles move with the SM clock.
here=$(dirname "$0")
work=${WORK:-/tmp/gpusim-clocks}
. "$here/session_common.sh"
measure=(python3 "$here/measure.py" --no-install)

stage "0 GPU state"
nvidia-smi -q > "$res/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.sm,clocks.applications.graphics --format=csv
ncu --version | tail -n 1
ncu --query-metrics --chip gh100 > "$res/ncu-metrics.txt" 2>&1 || ncu --query-metrics > "$res/ncu-metrics.txt" 2>&1
wanted=(gpu__time_duration sm__cycles_elapsed lts__cycles_elapsed dram__cycles_elapsed
        sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active sm__inst_executed_pipe_tensor_op_gmma
        lts__t_sector_hit_rate dram__bytes_read lts__t_sectors_srcunit_ltcfabric sm__warps_active)
suffix() {  # the metric with the suffix Nsight Compute wants for it
    case $1 in
        gpu__time_duration|dram__bytes_read|lts__t_sectors_srcunit_ltcfabric|sm__inst_executed_pipe_tensor_op_gmma) echo "$1.sum" ;;
        *__cycles_elapsed) echo "$1.max,$1.avg.per_second" ;;
        *_cycles_active) echo "$1.avg.pct_of_peak_sustained_elapsed" ;;
        lts__t_sector_hit_rate) echo "$1.pct" ;;
        sm__warps_active) echo "$1.avg.pct_of_peak_sustained_active" ;;
    esac
}
metrics=()
for m in "${wanted[@]}"; do
    if grep -q "^$m " "$res/ncu-metrics.txt"; then metrics+=("$(suffix "$m")"); else echo "not offered: $m"; fi
done
if [ ${#metrics[@]} -lt 4 ]; then  # an unexpected --query-metrics layout: the counters that worked before
    metrics=(gpu__time_duration.sum sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second
             lts__cycles_elapsed.avg.per_second lts__t_sector_hit_rate.pct dram__bytes_read.sum)
fi
metrics=$(IFS=,; echo "${metrics[*]}")
echo "metrics: $metrics"

gemms=()
for spec in traces/gemm/hopper_ws_*/gemm.yaml traces/gemm/hgemm_mma_multistage/gemm.yaml traces/gemm/sgemm_simt/gemm.yaml; do
    gemms+=(--gemm "$spec")
done
"$GPUSIM" export --out "$work/gemm" "${gemms[@]}" --sizes 1024x1024x1024,4096x4096x4096,6144x6144x6144,8192x8192x8192 \
    > "$res/export-gemm.log" 2>&1 || { tail "$res/export-gemm.log"; exit 1; }

# profile KERNEL SIZE WARMUPS TAG [ncu options]: the launch after WARMUPS warm-ups.
profile() {
    local name=$1 size=$2 warmup=$3 tag=$4; shift 4
    local log="$res/ncu-$name-$size-$tag.txt"
    timeout 45 ncu "$@" --launch-skip $((warmup + 1)) --launch-count 1 --metrics "$metrics" \
        "${measure[@]}" "$work/gemm" --csv "$res/run-$name-$size-$tag.csv" --warmup "$warmup" --repeats 2 \
        --only "/$name/gemm.yaml:$size" > "$log" 2>&1
    echo "-- $name $size $tag (exit $?): $(grep -E 'duration|sm__cycles_elapsed|lts__cycles_elapsed.avg|gmma_cycles' "$log" | awk '{print $1"="$NF}' | tr '\n' ' ')"
    pack
}

stage "1 unlocked, after 40 warm-ups"
for name in hopper_ws_bf16 hopper_ws_bf16_cluster2 hopper_ws_tf32 hopper_ws_tf32_cluster2 hopper_ws_bf16_splitk hgemm_mma_multistage; do
    for size in 4096x4096x4096 8192x8192x8192 6144x6144x6144; do
        profile "$name" "$size" 40 hot --clock-control none
    done
done
profile sgemm_simt 1024x1024x1024 40 hot --clock-control none

stage "2 settled and base clocks"
for name in hopper_ws_bf16 hopper_ws_bf16_cluster2; do
    profile "$name" 8192x8192x8192 300 settled --clock-control none
    profile "$name" 4096x4096x4096 40 base --clock-control base
    profile "$name" 8192x8192x8192 40 base --clock-control base
done
stage "done"
