#!/usr/bin/env python3
"""Nsight Compute's cycle counts as a measurement CSV for `gpusim correlate --at-measured-clock`.

    python3 tools/correlate/ncu_cycles.py RESULTS_DIR [--tag hot] --csv cycles.csv

RESULTS_DIR is what clocks_session.sh packed: for each profiled launch an `ncu-NAME-SIZE-TAG.txt`
(Nsight Compute's metrics of one launch) beside the `run-NAME-SIZE-TAG.csv` measure.py wrote
under it. Each row of the output is measure.py's row for that workload with the time and clock
replaced by Nsight Compute's: `median_us` the launch's duration (`gpu__time_duration.sum`),
`sm_clock_mhz` its SM cycles over that duration (`sm__cycles_elapsed.max`: the clock the SMs
really ran at, where NVML reports the clock the driver asked for), plus the columns `sm_cycles`,
`l2_clock_mhz` and `tag`. measure.py's own timings in those files are not used: Nsight Compute
slows the launches it does not profile too.
"""

import argparse
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import CSV_COLUMNS  # noqa: E402

EXTRA_COLUMNS = ["sm_cycles", "l2_clock_mhz", "tag"]
TIME_UNITS_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
                 "s": 1e6, "second": 1e6}
FREQUENCY_UNITS_MHZ = {"hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3}
METRIC_LINE = re.compile(r"^\s+([a-z0-9_]+__[A-Za-z0-9_.]+)\s+(\S+)\s+([\d,.]+)\s*$")
FILE_NAME = re.compile(r"^ncu-(.+)-(\d+x\d+x\d+)-([a-z0-9]+)\.txt$")


def metrics_of(text: str) -> dict:
    """{metric: (value, unit)} of the first profiled launch in an Nsight Compute report."""
    found = {}
    for line in text.splitlines():
        m = METRIC_LINE.match(line)
        if m and m.group(1) not in found:
            found[m.group(1)] = (float(m.group(3).replace(",", "")), m.group(2))
    return found


def duration_us(metrics: dict) -> float:
    value, unit = metrics["gpu__time_duration.sum"]
    return value * TIME_UNITS_US[unit.lower()]


def frequency_mhz(metrics: dict, name: str):
    if name not in metrics:
        return None
    value, unit = metrics[name]
    return value * FREQUENCY_UNITS_MHZ[unit.lower()]


def row_for(ncu_file: Path) -> dict:
    """The measurement row of one profiled launch (ValueError when its files are incomplete)."""
    m = FILE_NAME.match(ncu_file.name)
    if not m:
        raise ValueError(f"{ncu_file}: not an ncu-NAME-SIZE-TAG.txt file")
    metrics = metrics_of(ncu_file.read_text(errors="replace"))
    for needed in ("gpu__time_duration.sum", "sm__cycles_elapsed.max"):
        if needed not in metrics:
            raise ValueError(f"{ncu_file}: no {needed} (did the launch run under Nsight Compute?)")
    run_csv = ncu_file.with_name("run-" + ncu_file.name[len("ncu-"):-len(".txt")] + ".csv")
    with run_csv.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("launch") == "0"]
    if not rows:
        raise ValueError(f"{run_csv}: no launch 0")
    row = {k: rows[0].get(k, "") for k in CSV_COLUMNS}
    us = duration_us(metrics)
    cycles = metrics["sm__cycles_elapsed.max"][0]
    l2 = frequency_mhz(metrics, "lts__cycles_elapsed.avg.per_second")
    row.update({
        "median_us": f"{us:.3f}", "min_us": f"{us:.3f}", "max_us": f"{us:.3f}", "repeats": "1",
        "sm_clock_mhz": f"{cycles / us:.1f}", "sm_cycles": str(int(cycles)),
        "l2_clock_mhz": "" if l2 is None else f"{l2:.0f}", "tag": m.group(3),
    })
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the directory clocks_session.sh's results.tgz unpacks to")
    parser.add_argument("--csv", type=Path, required=True, help="where to write the measurement CSV")
    parser.add_argument("--tag", action="append", help="only launches with this tag (hot, settled, base; repeatable)")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(f"ncu_cycles.py: {args.results} is not a directory", file=sys.stderr)
        return 2
    files = sorted(p for p in args.results.glob("ncu-*.txt") if FILE_NAME.match(p.name))
    rows = []
    for f in files:
        if args.tag and FILE_NAME.match(f.name).group(3) not in args.tag:
            continue
        try:
            rows.append(row_for(f))
        except (ValueError, OSError, KeyError) as e:
            print(f"ncu_cycles.py: skipped: {e}", file=sys.stderr)
    if not rows:
        print(f"ncu_cycles.py: no profiled launches in {args.results}", file=sys.stderr)
        return 1
    try:
        with args.csv.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CSV_COLUMNS + EXTRA_COLUMNS)
            w.writeheader()
            w.writerows(rows)
    except OSError as e:
        print(f"ncu_cycles.py: cannot write {args.csv}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {len(rows)} launch(es) to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
