"""Tests of gemm_phases.py (needs numpy; skipped without it): waves are a CTA's place on its SM,
phases are differences of its stamps, the switch is an SM's previous CTA's end to the next's entry."""

import importlib.util
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None


def cta(sm, t0, fill, loop, epilogue, store):
    t1 = t0 + fill
    t2 = t1 + loop
    t3 = t2 + epilogue
    return [sm, t0, t1, t2, t3, t3 + store, 0, 1]


@unittest.skipUnless(HAVE_NUMPY, "numpy is not installed")
class GemmPhasesTest(unittest.TestCase):
    def test_waves_phases_and_switches(self):
        import numpy as np
        import gemm_phases

        # SM 7 runs two CTAs (the second 100 cycles after the first ends), SM 3 one; SM 3's
        # clock is unrelated to SM 7's.
        rows = [cta(7, 5000, 10, 20, 30, 40), cta(3, 90, 12, 20, 30, 44), cta(7, 5200, 14, 20, 30, 50)]
        w = gemm_phases.waves(np.array(rows, dtype=np.uint64))
        self.assertEqual(sorted(w), [0, 1])
        self.assertEqual((w[0]["ctas"], w[0]["fill"], w[0]["store"], w[0]["switch"]), (2, 11.0, 42.0, None))
        self.assertEqual((w[1]["ctas"], w[1]["fill"], w[1]["loop"], w[1]["switch"]), (1, 14.0, 20.0, 100.0))
        with tempfile.TemporaryDirectory() as d:
            np.save(Path(d) / "x__stamps_k64.npy", np.array(rows, dtype=np.uint64).reshape(-1))
            self.assertEqual(list(gemm_phases.load(Path(d))), [64])
            self.assertEqual(gemm_phases.main([d]), 0)
            self.assertEqual(gemm_phases.main([str(Path(d) / "none")]), 2)
            (Path(d) / "empty").mkdir()
            self.assertEqual(gemm_phases.main([str(Path(d) / "empty")]), 1)


if __name__ == "__main__":
    unittest.main()
