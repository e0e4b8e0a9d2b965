# Sourced by the prepared GPU sessions (gpu_session.sh, units_session.sh) after they set
# `work` (their scratch directory): checks GPUSIM and OUT, creates $work/results ($res), and
# defines `stage` (pack, then announce a stage) and `pack`. Everything measured goes to $res
# and is packed into $OUT/results.tgz after every stage and at exit (the lent machines return
# few files, and a stage killed by its limit must not lose earlier ones).
set -u
: "${GPUSIM:?set GPUSIM to a gpusim binary}"
: "${OUT:?set OUT to the results directory}"
export PYTHONUNBUFFERED=1
res=$work/results
rm -rf "$work" && mkdir -p "$res" "$OUT"
pack() { tar czf "$OUT/results.tgz" -C "$res" . ; }
stage() { pack; echo "== $(date -u +%T) $*"; }
trap pack EXIT
