"""Tests of ncu_cycles.py (no GPU, no Nsight Compute): an Nsight Compute report and measure.py's
row become a measurement row timed and clocked by Nsight Compute."""

import csv
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ncu_cycles  # noqa: E402
from measure import CSV_COLUMNS  # noqa: E402

REPORT = """==PROF== Connected to process 1
  hopper_ws_bf16 (32, 64, 1)x(384, 1, 1), Context 1, Stream 13, Device 0, CC 9.0
    Section: Command line profiler metrics
    ---------------------------------------------------- ----------- ------------
    Metric Name                                          Metric Unit Metric Value
    ---------------------------------------------------- ----------- ------------
    gpu__time_duration.sum                                        {unit} {duration}
    lts__cycles_elapsed.avg.per_second                            Ghz         1.71
    sm__cycles_elapsed.avg.per_second                             Ghz         1.50
    sm__cycles_elapsed.max                                      cycle    2,342,640
    ---------------------------------------------------- ----------- ------------
"""


def write_pair(d: Path, stem: str, unit="ms", duration="1.54", report=REPORT):
    (d / f"ncu-{stem}.txt").write_text(report.format(unit=unit, duration=duration))
    with (d / f"run-{stem}.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        row = {k: "" for k in CSV_COLUMNS}
        row.update(workload="gemm:traces/gemm/hopper_ws_bf16/gemm.yaml:8192x8192x8192", launch="0",
                   entry="hopper_ws_bf16", median_us="557587.9", sm_clock_mhz="1980.0", gpu="NVIDIA H200")
        w.writerow(row)


class NcuCyclesTest(unittest.TestCase):
    def test_the_clock_is_cycles_over_the_profiled_duration(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            write_pair(d, "hopper_ws_bf16-8192x8192x8192-hot")
            row = ncu_cycles.row_for(d / "ncu-hopper_ws_bf16-8192x8192x8192-hot.txt")
            self.assertEqual(row["median_us"], "1540.000")  # ms → µs; measure.py's 557587.9 replaced
            self.assertEqual(row["sm_clock_mhz"], f"{2342640 / 1540:.1f}")  # not NVML's 1980
            self.assertEqual((row["sm_cycles"], row["l2_clock_mhz"], row["tag"]), ("2342640", "1710", "hot"))
            self.assertEqual(row["gpu"], "NVIDIA H200")

    def test_tags_select_and_incomplete_reports_are_skipped(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            write_pair(d, "hopper_ws_bf16-4096x4096x4096-hot", unit="us", duration="198.08")
            write_pair(d, "hopper_ws_bf16-4096x4096x4096-base", unit="us", duration="244.93")
            write_pair(d, "hopper_ws_bf16-8192x8192x8192-hot", report="==ERROR== the launch failed\n")
            out = d / "cycles.csv"
            self.assertEqual(ncu_cycles.main([str(d), "--csv", str(out), "--tag", "hot"]), 0)
            with out.open(newline="") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([(r["tag"], r["median_us"]) for r in rows], [("hot", "198.080")])
            self.assertEqual(ncu_cycles.main([str(d), "--csv", str(out), "--tag", "settled"]), 1)
            # bad input: no such directory, an unwritable CSV
            self.assertEqual(ncu_cycles.main([str(d / "none"), "--csv", str(out)]), 2)
            self.assertEqual(ncu_cycles.main([str(d), "--csv", str(d / "no" / "dir.csv")]), 2)


if __name__ == "__main__":
    unittest.main()
