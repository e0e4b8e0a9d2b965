#!/usr/bin/env python3
"""Per-wave phases of traces/microbench/gemm_phases.yaml from its stamps.

    python3 tools/correlate/gemm_phases.py DIR

DIR holds `stamps_k<K>.npy` (or measure.py's `--dump-dir` names, `…__stamps_k<K>.npy`): 8 u64 per
CTA — %smid, %clock64 at entry, after the first full-stage wait, at the end of the main loop,
after the epilogue's shared-memory stores, after the TMA store's wait_group 0, and %globaltimer
at entry and at the end (gen_gemm_phases.py). %clock64 is per SM, so only differences within a
CTA, and between CTAs of one SM, mean anything. A CTA's wave is its place among its SM's CTAs
in start order. Prints, per K and wave, the median cycles of each phase and of the switch from
an SM's previous CTA (its end to the next one's entry).
"""

import argparse
import collections
import re
import sys
from pathlib import Path

import numpy as np

PHASES = ("fill", "loop", "epilogue", "store")


def load(directory: Path) -> dict:
    """{K: stamps as an (n, 8) int64 array}."""
    found = {}
    for p in sorted(directory.glob("*stamps_k*.npy")):
        m = re.search(r"stamps_k(\d+)\.npy$", p.name)
        if m:
            found[int(m.group(1))] = np.load(p).reshape(-1, 8).astype(np.int64)
    return found


def waves(stamps: np.ndarray) -> dict:
    """{wave: {phase: median cycles, 'ctas': n, 'switch': median or None}}."""
    sm, t0, t1, t2, t3, t4 = stamps[:, 0], stamps[:, 1], stamps[:, 2], stamps[:, 3], stamps[:, 4], stamps[:, 5]
    spans = {"fill": t1 - t0, "loop": t2 - t1, "epilogue": t3 - t2, "store": t4 - t3}
    wave = np.zeros(len(sm), dtype=int)
    switch = np.full(len(sm), -1, dtype=np.int64)
    by_sm = collections.defaultdict(list)
    for i in np.argsort(t0, kind="stable"):
        by_sm[sm[i]].append(i)
    for ctas in by_sm.values():
        for w, i in enumerate(ctas):
            wave[i] = w
            if w:
                switch[i] = t0[i] - t4[ctas[w - 1]]
    out = {}
    for w in sorted(set(wave)):
        m = wave == w
        row = {name: float(np.median(v[m])) for name, v in spans.items()}
        row["ctas"] = int(m.sum())
        s = switch[m & (switch >= 0)]
        row["switch"] = float(np.median(s)) if len(s) else None
        out[w] = row
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    if not args.dir.is_dir():
        print(f"gemm_phases.py: {args.dir} is not a directory", file=sys.stderr)
        return 2
    stamps = load(args.dir)
    if not stamps:
        print(f"gemm_phases.py: no stamps_k<K>.npy in {args.dir}", file=sys.stderr)
        return 1
    print("K,wave,ctas," + ",".join(PHASES) + ",switch")
    for k, s in sorted(stamps.items()):
        for w, row in waves(s).items():
            sw = "" if row["switch"] is None else f"{row['switch']:.0f}"
            print(f"{k},{w},{row['ctas']}," + ",".join(f"{row[p]:.0f}" for p in PHASES) + f",{sw}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
