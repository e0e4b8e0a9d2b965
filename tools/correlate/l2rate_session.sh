#!/usr/bin/env bash
# A prepared measurement session for the L2's bandwidth as Nsight Compute rates it
# (docs/correlation.md, "Measuring"):
#
#   GPUSIM=path/to/gpusim OUT=results/ bash tools/correlate/l2rate_session.sh
#
# The L2 read stream (docs/correlation/h100-sxm-2026-11-27/l2bw) reached 8.0–8.3 TB/s, while
# hopper_ws_bf16 at 4096³ runs at the same rate with its SMs' tensor pipes, not the L2, setting
# the pace (its cycles do not move with the SM clock: clocks_session.sh). This asks the GPU what
# its L2 and crossbar can do (`*.peak_sustained`: the units' design rates per cycle), how much
# of that the GEMMs and the stream used, and which L2 sub-unit was busiest (the breakdown of
# `lts__throughput`). Stages packed into $OUT/results.tgz as they go:
#   1. hopper_ws_bf16 and hopper_ws_bf16_cluster2 at 4096³ and hopper_ws_bf16 at 8192³, the
#      launch after 40 warm-ups; 2. the four launches of the L2 read stream.
here=$(dirname "$0")
work=${WORK:-/tmp/gpusim-l2rate}
. "$here/session_common.sh"
measure=(python3 "$here/measure.py" --no-install)

rates=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.max,lts__cycles_elapsed.avg.per_second
for m in lts__t_bytes lts__t_sectors lts__d_sectors l1tex__m_xbar2l1tex_read_bytes; do
    rates+=",$m.sum,$m.sum.peak_sustained,$m.sum.per_second"
done
rates+=",lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed"
rates+=",l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum,lts__t_sector_hit_rate.pct"
breakdown=breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed

stage "0 export"
"$GPUSIM" export --out "$work/gemm" --gemm traces/gemm/hopper_ws_bf16/gemm.yaml --gemm traces/gemm/hopper_ws_bf16_cluster2/gemm.yaml \
    --sizes 4096x4096x4096,8192x8192x8192 > "$res/export-gemm.log" 2>&1 || { tail "$res/export-gemm.log"; exit 1; }
"$GPUSIM" export --out "$work/l2bw" docs/correlation/h100-sxm-2026-11-27/l2bw/l2bw.yaml > "$res/export-l2bw.log" 2>&1 \
    || { tail "$res/export-l2bw.log"; exit 1; }

# ncu_run LOG NCU-ARGS... -- MEASURE-ARGS...: with the breakdown, and without it if this ncu refuses it.
ncu_run() {
    local log=$1; shift
    local ncu_args=() ; while [ "$1" != "--" ]; do ncu_args+=("$1"); shift; done; shift
    timeout 60 ncu --clock-control none "${ncu_args[@]}" --metrics "$rates,$breakdown" "${measure[@]}" "$@" > "$log" 2>&1
    if grep -q '==ERROR==' "$log"; then
        mv "$log" "$log.refused"
        timeout 60 ncu --clock-control none "${ncu_args[@]}" --metrics "$rates" "${measure[@]}" "$@" > "$log" 2>&1
    fi
    echo "-- $(basename "$log") (exit $?): $(grep -E 'lts__t_bytes.sum|xbar2l1tex_read_bytes.sum|duration' "$log" | awk '{print $1"="$(NF-1)$NF}' | tr '\n' ' ')"
    pack
}

stage "1 GEMMs"
for w in hopper_ws_bf16:4096 hopper_ws_bf16_cluster2:4096 hopper_ws_bf16:8192; do
    name=${w%%:*}; n=${w##*:}
    ncu_run "$res/ncu-$name-$n.txt" --launch-skip 41 --launch-count 1 -- "$work/gemm" --csv "$res/run-$name-$n.csv" \
        --warmup 40 --repeats 2 --only "/$name/gemm.yaml:${n}x"
done
stage "2 L2 stream"
ncu_run "$res/ncu-l2bw.txt" --launch-count 4 -- "$work/l2bw" --csv "$res/run-l2bw.csv" --warmup 0 --repeats 1
stage "done"
