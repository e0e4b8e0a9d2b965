"""Tests of measure.py without a GPU.

Run from the repository root:  python3 -m unittest discover -s tools/correlate -p 'test_*.py'

The plan, parameter, CSV and package logic need only the standard library; the comparisons,
the GEMM reference and the run against a stand-in driver need numpy and are skipped without it.
"""

import contextlib
import ctypes
import importlib.util
import io
import json
import struct
import sys
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
needs_numpy = unittest.skipUnless(HAVE_NUMPY, "numpy is not installed")

TENSOR_MAP = {
    "buffer": "a", "dtype": "u32", "dims": [4, 1], "strides": [16], "box": [4, 1],
    "element_strides": [1, 1], "swizzle": "none", "oob_fill": "zero",
    "interleave": "none", "l2_promotion": "none",
}

SOURCE = struct.pack("<4I", 1, 2, 3, 4)


def copy_workload(name="traces/kernels/copy/copy.yaml"):
    """A workload whose launch copies buffer a into c (the fake driver runs it)."""
    return {
        "workload": name,
        "ptx": "w0/kernel.ptx",
        "buffers": [
            {"name": "a", "dtype": "u32", "shape": [4], "bytes": 16, "file": "w0/a.bin"},
            {"name": "c", "dtype": "u32", "shape": [4], "bytes": 16, "zeros": True},
            {"name": "r", "dtype": "bf16", "shape": [8], "bytes": 16,
             "random": {"seed": 7, "low": -1.0, "high": 1.0}},
        ],
        "launches": [
            {
                "entry": "copy_u32",
                "grid": [2, 1, 1], "block": [128, 1, 1], "cluster": [2, 1, 1],
                "shared_bytes": 64 * 1024,
                "params": [
                    {"offset": 0, "size": 8, "pointer": "c"},
                    {"offset": 8, "size": 8, "pointer": "a"},
                    {"offset": 16, "size": 4, "hex": "04000000"},
                    {"offset": 24, "size": 8, "tensor_map_pointer": dict(TENSOR_MAP)},
                    {"offset": 64, "size": 128, "tensor_map": dict(TENSOR_MAP)},
                ],
            }
        ],
        "checks": [{"buffer": "c", "dtype": "u32", "expected": "w0/check0.bin", "rtol": 0, "atol": 0}],
    }


def write_plan_dir(root: Path, workloads, ptx="PTX copy", expected=SOURCE) -> Path:
    (root / "w0").mkdir(parents=True, exist_ok=True)
    (root / "w0" / "kernel.ptx").write_text(ptx)
    (root / "w0" / "a.bin").write_bytes(SOURCE)
    (root / "w0" / "check0.bin").write_bytes(expected)
    (root / "plan.json").write_text(json.dumps({"format": "gpusim-export/1", "workloads": workloads}))
    return root


class PlanTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def assertPlanError(self, workload, *fragments):
        write_plan_dir(self.root, [workload])
        with self.assertRaises(measure.PlanError) as caught:
            measure.load_plan(self.root)
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))


class PlanLoadingTests(PlanTestCase):
    def test_a_valid_plan_loads(self):
        workload = copy_workload()
        del workload["checks"]
        write_plan_dir(self.root, [workload])
        plan = measure.load_plan(self.root)
        self.assertEqual(plan["workloads"][0]["workload"], "traces/kernels/copy/copy.yaml")
        self.assertEqual(plan["workloads"][0]["checks"], [])  # checks are optional

    def test_a_missing_plan_is_reported(self):
        with self.assertRaises(measure.PlanError) as caught:
            measure.load_plan(self.root)
        self.assertIn("plan.json", str(caught.exception))

    def test_the_format_is_checked(self):
        write_plan_dir(self.root, [])
        (self.root / "plan.json").write_text(json.dumps({"format": "gpusim-export/2", "workloads": []}))
        with self.assertRaisesRegex(measure.PlanError, "format: expected 'gpusim-export/1'"):
            measure.load_plan(self.root)

    def test_a_missing_key_is_named_by_its_path(self):
        workload = copy_workload()
        del workload["buffers"][1]["bytes"]
        self.assertPlanError(workload, "workloads[0].buffers[1].bytes: missing")

    def test_a_buffer_has_exactly_one_fill(self):
        workload = copy_workload()
        workload["buffers"][1]["file"] = "w0/a.bin"
        self.assertPlanError(workload, "workloads[0].buffers[1]", "exactly one of file, zeros, random")

    def test_a_buffer_file_must_have_the_buffer_size(self):
        workload = copy_workload()
        workload["buffers"][0]["bytes"] = 32
        self.assertPlanError(workload, "workloads[0].buffers[0].file", "16 bytes, the buffer 32")

    def test_buffer_names_are_unique(self):
        workload = copy_workload()
        workload["buffers"][1]["name"] = "a"
        self.assertPlanError(workload, "workloads[0].buffers[1].name", "used twice")

    def test_an_empty_random_range_is_refused(self):
        workload = copy_workload()
        workload["buffers"][2]["random"]["high"] = -1.0
        self.assertPlanError(workload, "workloads[0].buffers[2].random", "holds no bf16 value")

    def test_a_pointer_names_a_buffer(self):
        workload = copy_workload()
        workload["launches"][0]["params"][0]["pointer"] = "nope"
        self.assertPlanError(workload, "workloads[0].launches[0].params[0].pointer", "no buffer named 'nope'")

    def test_hex_bytes_match_the_size(self):
        workload = copy_workload()
        workload["launches"][0]["params"][2]["hex"] = "0400"
        self.assertPlanError(workload, "params[2].hex", "2 bytes, the parameter has 4")

    def test_a_tensor_map_parameter_has_128_bytes(self):
        workload = copy_workload()
        workload["launches"][0]["params"][4]["size"] = 64
        self.assertPlanError(workload, "params[4].size", "needs 128 bytes")

    def test_tensor_map_lists_follow_the_rank(self):
        workload = copy_workload()
        workload["launches"][0]["params"][3]["tensor_map_pointer"]["strides"] = [16, 64]
        self.assertPlanError(workload, "params[3].tensor_map_pointer.strides", "rank 2 needs 1")

    def test_tensor_map_swizzle_is_one_of_the_known(self):
        workload = copy_workload()
        workload["launches"][0]["params"][4]["tensor_map"]["swizzle"] = "256B"
        self.assertPlanError(workload, "params[4].tensor_map.swizzle", "'256B' is not one of")

    def test_a_cluster_has_three_positive_extents(self):
        workload = copy_workload()
        workload["launches"][0]["cluster"] = [2, 0, 1]
        self.assertPlanError(workload, "workloads[0].launches[0].cluster[1]")

    def test_a_grid_is_a_list_of_three(self):
        workload = copy_workload()
        workload["launches"][0]["grid"] = [2, 1]
        self.assertPlanError(workload, "workloads[0].launches[0].grid", "expected [x, y, z]")

    def test_an_expectation_fits_its_buffer(self):
        workload = copy_workload()
        write_plan_dir(self.root, [workload], expected=bytes(20))
        with self.assertRaisesRegex(measure.PlanError, r"checks\[0\]\.expected"):
            measure.load_plan(self.root)

    def test_gemm_buffers_have_the_gemm_sizes(self):
        workload = copy_workload()
        for buffer in workload["buffers"][:2]:
            buffer.update(dtype="f32")
        workload["checks"] = [{"buffer": "c", "gemm": {
            "m": 2, "n": 2, "k": 3, "a": "a", "b": "a", "b_layout": "kn"}}]
        self.assertPlanError(workload, "workloads[0].checks[0].gemm.a", "not 6 f32 elements")

    def test_a_check_is_expected_values_or_a_gemm(self):
        workload = copy_workload()
        del workload["checks"][0]["expected"]
        self.assertPlanError(workload, "workloads[0].checks[0]", "exactly one of expected, gemm")


class SelectionTests(unittest.TestCase):
    def test_only_keeps_workloads_containing_a_substring(self):
        workloads = [{"workload": "traces/a/vecadd.yaml"}, {"workload": "traces/gemm/h100.yaml"}]
        self.assertEqual(measure.select_workloads(workloads, None), workloads)
        self.assertEqual(measure.select_workloads(workloads, ["gemm", "nothing"]), workloads[1:])

    def test_ptx_is_nul_terminated_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "k.ptx").write_bytes(b".version 8.0\n")
            self.assertEqual(measure.read_ptx(Path(tmp), {"ptx": "k.ptx"}), b".version 8.0\n\0")
            (Path(tmp) / "k.ptx").write_bytes(b"x\0")
            self.assertEqual(measure.read_ptx(Path(tmp), {"ptx": "k.ptx"}), b"x\0")


class ParamTests(unittest.TestCase):
    addresses = {"a": 0x7F00_0000_1000, "c": 0x7F00_0000_2000}

    def encode(self, tm, address):
        self.encoded.append((tm["buffer"], address))
        return bytes(range(128))

    def place(self, map_bytes):
        self.placed.append(map_bytes)
        return 0x7F00_0000_9000

    def setUp(self):
        self.encoded, self.placed = [], []

    def build(self, param):
        return measure.param_bytes(param, self.addresses, self.encode, self.place)

    def test_a_pointer_is_the_buffer_address_little_endian(self):
        self.assertEqual(self.build({"size": 8, "pointer": "c"}), struct.pack("<Q", 0x7F00_0000_2000))

    def test_hex_is_the_literal_bytes(self):
        self.assertEqual(self.build({"size": 4, "hex": "e8030000"}), b"\xe8\x03\x00\x00")

    def test_a_tensor_map_is_encoded_over_its_buffer(self):
        self.assertEqual(self.build({"size": 128, "tensor_map": TENSOR_MAP}), bytes(range(128)))
        self.assertEqual(self.encoded, [("a", 0x7F00_0000_1000)])
        self.assertEqual(self.placed, [])

    def test_a_tensor_map_pointer_points_at_the_placed_map(self):
        self.assertEqual(self.build({"size": 8, "tensor_map_pointer": TENSOR_MAP}),
                         struct.pack("<Q", 0x7F00_0000_9000))
        self.assertEqual(self.placed, [bytes(range(128))])

    def test_a_wider_parameter_is_zero_padded(self):
        self.assertEqual(self.build({"size": 16, "pointer": "c"}), struct.pack("<QQ", 0x7F00_0000_2000, 0))
        self.assertEqual(self.build({"size": 192, "tensor_map": TENSOR_MAP}), bytes(range(128)) + bytes(64))

    def test_an_encoder_must_return_128_bytes(self):
        with self.assertRaises(ValueError):
            measure.param_bytes({"size": 128, "tensor_map": TENSOR_MAP}, self.addresses,
                                lambda tm, a: b"x", self.place)

    def test_launch_parameters_keep_their_order(self):
        launch = {"params": [{"size": 1, "hex": "01"}, {"size": 8, "pointer": "a"}, {"size": 2, "hex": "0203"}]}
        blobs = measure.launch_param_bytes(launch, self.addresses, self.encode, self.place)
        self.assertEqual(blobs, [b"\x01", struct.pack("<Q", 0x7F00_0000_1000), b"\x02\x03"])

    def test_kernel_params_is_an_array_of_pointers_to_the_bytes(self):
        blobs = [b"\x01\x02\x03\x04", bytes(range(128))]
        params = measure.KernelParams(blobs)
        pointers = (ctypes.c_void_p * 2).from_address(params.address)
        self.assertEqual([ctypes.string_at(p, len(b)) for p, b in zip(pointers, blobs)], blobs)
        self.assertEqual(measure.KernelParams([]).address, 0)

    def test_tensor_map_bytes_are_the_words_little_endian(self):
        self.assertEqual(measure.tensor_map_bytes(range(16)), b"".join(struct.pack("<Q", i) for i in range(16)))
        with self.assertRaises(ValueError):
            measure.tensor_map_bytes(range(8))

    def test_a_cluster_attribute_only_for_real_clusters(self):
        self.assertIsNone(measure.cluster_dims({"cluster": None}))
        self.assertIsNone(measure.cluster_dims({"cluster": [1, 1, 1]}))
        self.assertEqual(measure.cluster_dims({"cluster": [2, 1, 1]}), [2, 1, 1])

    def test_dynamic_shared_memory_is_the_largest_request_per_entry(self):
        launches = [{"entry": "k", "shared_bytes": 1000}, {"entry": "k", "shared_bytes": 99000},
                    {"entry": "j", "shared_bytes": 0}]
        self.assertEqual(measure.dynamic_shared_by_entry(launches), {"k": 99000, "j": 0})


RUN_INFO = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "550.54.15", "cuda_driver": "12.4",
            "power_limit_w": 700.0, "timestamp": "2025-01-02T03:04:05+00:00"}
LAUNCH = {"entry": "vecadd", "grid": [4, 1, 1], "block": [256, 1, 1], "cluster": None}


class CsvTests(unittest.TestCase):
    def test_the_columns_and_their_order(self):
        self.assertEqual(measure.CSV_COLUMNS, [
            "workload", "launch", "entry", "grid", "block", "cluster", "median_us", "min_us", "max_us",
            "repeats", "check", "mismatches", "sm_clock_mhz", "mem_clock_mhz", "power_w_mean",
            "power_w_max", "power_limit_w", "gpu", "driver", "cuda_driver", "timestamp"])

    def test_a_measured_row(self):
        timing = measure.LaunchTiming([3.0, 1.0, 2.0, 10.0], 1980.0, 2619.0, 312.345, 350.0)
        outcome = measure.WorkloadOutcome("pass", 0, [timing])
        row = measure.csv_row("traces/v.yaml", 0, dict(LAUNCH, cluster=[2, 1, 1]), outcome, timing, RUN_INFO)
        self.assertEqual(len(row), len(measure.CSV_COLUMNS))
        self.assertEqual(dict(zip(measure.CSV_COLUMNS, row)), {
            "workload": "traces/v.yaml", "launch": "0", "entry": "vecadd", "grid": "4x1x1",
            "block": "256x1x1", "cluster": "2x1x1", "median_us": "2.500", "min_us": "1.000",
            "max_us": "10.000", "repeats": "4", "check": "pass", "mismatches": "0",
            "sm_clock_mhz": "1980.0", "mem_clock_mhz": "2619.0", "power_w_mean": "312.35",
            "power_w_max": "350.00", "power_limit_w": "700.0", "gpu": "NVIDIA H100 80GB HBM3",
            "driver": "550.54.15", "cuda_driver": "12.4", "timestamp": "2025-01-02T03:04:05+00:00"})

    def test_an_unread_sensor_is_an_empty_cell(self):
        timing = measure.LaunchTiming([1.0])
        row = measure.csv_row("w", 0, LAUNCH, measure.WorkloadOutcome("none", None, [timing]), timing, {})
        cells = dict(zip(measure.CSV_COLUMNS, row))
        self.assertEqual((cells["cluster"], cells["mismatches"], cells["sm_clock_mhz"], cells["gpu"]),
                         ("", "", "", ""))

    def test_a_failed_workload_has_a_row_per_launch_without_timings(self):
        workload = {"workload": "w", "launches": [LAUNCH, dict(LAUNCH, entry="second")]}
        rows = measure.workload_rows(workload, measure.WorkloadOutcome("error"), RUN_INFO)
        self.assertEqual([r[1:3] for r in rows], [["0", "vecadd"], ["1", "second"]])
        for row in rows:
            cells = dict(zip(measure.CSV_COLUMNS, row))
            self.assertEqual(cells["check"], "error")
            for column in ("median_us", "min_us", "max_us", "repeats", "mismatches", "sm_clock_mhz"):
                self.assertEqual(cells[column], "", column)
            self.assertEqual(cells["gpu"], "NVIDIA H100 80GB HBM3")

    def test_the_progress_line_has_the_medians(self):
        workload = {"workload": "w", "launches": [LAUNCH]}
        outcome = measure.WorkloadOutcome("fail", 3, [measure.LaunchTiming([1.0, 2.0, 4.0])])
        self.assertEqual(measure.progress_line("1/2", workload, outcome),
                         "[1/2] w: check fail (3 mismatches); #0 vecadd 2.000 us")

    def test_formatting_helpers(self):
        self.assertEqual(measure.format_cuda_version(12040), "12.4")
        self.assertEqual(measure.format_cuda_version(13000), "13.0")
        self.assertEqual(measure.dim3_text([1, 2, 3]), "1x2x3")
        self.assertEqual(measure.fixed(None, 3), "")
        self.assertEqual(measure.fixed(1.23456, 3), "1.235")
        self.assertEqual(measure.run_info_path(Path("docs/correlation/h100.csv")),
                         Path("docs/correlation/h100.run.json"))


class StatsTests(unittest.TestCase):
    def test_median_min_max(self):
        self.assertEqual(measure.time_summary([5.0, 1.0, 3.0]), (3.0, 1.0, 5.0))
        self.assertEqual(measure.time_summary([4.0, 1.0, 3.0, 2.0]), (2.5, 1.0, 4.0))

    def test_samples_skip_unread_values(self):
        summary = measure.summarize_samples([(1000, 2000, 100.0), (None, 2600, None), (1200, None, 300.0)])
        self.assertEqual(summary, {"sm_clock_mhz": 1100.0, "mem_clock_mhz": 2300.0,
                                   "power_w_mean": 200.0, "power_w_max": 300.0})
        self.assertEqual(measure.summarize_samples([]), {"sm_clock_mhz": None, "mem_clock_mhz": None,
                                                         "power_w_mean": None, "power_w_max": None})

    def test_the_sampler_samples_at_least_once(self):
        with measure.Sampler(lambda: (1, 2, 3.0)) as sampler:
            pass
        self.assertGreaterEqual(len(sampler.samples), 1)


class PackageTests(unittest.TestCase):
    def test_pip_installs_for_the_user_outside_a_virtualenv(self):
        command = measure.pip_install_command(["numpy"], in_venv=False, break_system_packages=False)
        self.assertEqual(command[1:], ["-m", "pip", "install", "--user", "numpy"])

    def test_pip_installs_into_a_virtualenv_and_can_override_pep668(self):
        command = measure.pip_install_command(["numpy"], in_venv=True, break_system_packages=True)
        self.assertEqual(command[1:], ["-m", "pip", "install", "--break-system-packages", "numpy"])

    def test_cuda_python_follows_the_driver_major_version(self):
        self.assertEqual(measure.pip_requirement("cuda-python", 12040), "cuda-python<13")
        self.assertEqual(measure.pip_requirement("cuda-python", None), "cuda-python")
        self.assertEqual(measure.pip_requirement("numpy", 12040), "numpy")

    def test_pep668_refusal_is_recognised(self):
        self.assertTrue(measure.refused_by_pep668("error: externally-managed-environment\n"))
        self.assertFalse(measure.refused_by_pep668("ERROR: No matching distribution"))

    def test_no_install_is_a_clear_error(self):
        original = measure.missing_packages
        measure.missing_packages = lambda: ["cuda-python"]
        try:
            with self.assertRaisesRegex(measure.SetupError, "missing Python packages: cuda-python"):
                measure.ensure_packages(no_install=True)
        finally:
            measure.missing_packages = original


class ArgumentTests(unittest.TestCase):
    def test_defaults_and_repeated_only(self):
        args = measure.parse_args(["plan", "--csv", "out.csv", "--only", "gemm", "vecadd", "--only", "tma"])
        self.assertEqual((args.warmup, args.repeats, args.device, args.no_install), (3, 20, 0, False))
        self.assertEqual(args.only, ["gemm", "vecadd", "tma"])

    def test_repeats_must_be_positive(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            measure.parse_args(["plan", "--csv", "out.csv", "--repeats", "0"])


@needs_numpy
class CompareTests(unittest.TestCase):
    def f32(self, *values):
        return struct.pack(f"<{len(values)}f", *values)

    def test_floats_equal_both_nan_or_within_tolerance(self):
        nan, inf = float("nan"), float("inf")
        expected = self.f32(1.0, nan, inf, 100.0, 0.0)
        self.assertEqual(measure.count_mismatches(self.f32(1.0, nan, inf, 100.0, 0.0), expected, "f32", 0, 0), 0)
        # NaN against a number, a number against NaN, a wrong inf, an error of 1 on 100.
        self.assertEqual(measure.count_mismatches(self.f32(nan, 1.0, -inf, 101.0, 0.0), expected, "f32", 0, 0), 4)

    def test_atol_plus_rtol_times_expected(self):
        expected = self.f32(100.0, 0.0)
        got = self.f32(101.5, 0.25)
        self.assertEqual(measure.count_mismatches(got, expected, "f32", rtol=0.01, atol=0.5), 0)
        self.assertEqual(measure.count_mismatches(got, expected, "f32", rtol=0.01, atol=0.2), 2)
        self.assertEqual(measure.count_mismatches(got, expected, "f32", rtol=0.0, atol=1.5), 0)

    def test_bf16_is_the_upper_half_of_an_f32(self):
        def bf16(x):
            return struct.pack("<H", struct.unpack("<I", struct.pack("<f", x))[0] >> 16)

        self.assertEqual(list(measure.decode_floats(bf16(1.5) + bf16(-2.0), "bf16")), [1.5, -2.0])
        self.assertEqual(measure.count_mismatches(bf16(1.5), bf16(1.5), "bf16", 0, 0), 0)
        self.assertEqual(measure.count_mismatches(bf16(1.5), bf16(1.0), "bf16", 0, 0.25), 1)

    def test_f16(self):
        half = struct.pack("<2e", 0.5, 65504.0)
        self.assertEqual(list(measure.decode_floats(half, "f16")), [0.5, 65504.0])
        self.assertEqual(measure.count_mismatches(half, struct.pack("<2e", 0.5, 65472.0), "f16", 0, 0), 1)

    def test_integers_are_exact(self):
        big = struct.pack("<2Q", 2**64 - 1, 7)
        # 2**64-1 and 2**64-2 are one float64 apart from nothing: compared as integers they differ.
        self.assertEqual(measure.count_mismatches(big, struct.pack("<2Q", 2**64 - 2, 7), "u64", 1.0, 1.0), 1)
        self.assertEqual(measure.count_mismatches(struct.pack("<2i", -1, 5), struct.pack("<2i", -1, 5), "i32", 0, 0), 0)
        self.assertEqual(measure.count_mismatches(b"\x01\x02", b"\x01\x03", "u8", 0, 0), 1)

    def test_gemm_reference_kn_and_nk(self):
        import numpy as np

        a = np.arange(6, dtype=np.float32).reshape(2, 3)  # m=2, k=3
        b_kn = np.arange(12, dtype=np.float32).reshape(3, 4)  # k=3, n=4
        c0 = np.ones((2, 4), dtype=np.float32)
        gemm = {"m": 2, "n": 4, "k": 3, "b_layout": "kn", "alpha": 2.0, "beta": 0.5}
        want = 2.0 * a.astype(np.float64) @ b_kn + 0.5
        got = measure.gemm_reference(gemm, a.tobytes(), "f32", b_kn.tobytes(), "f32", c0.tobytes(), "f32")
        np.testing.assert_array_equal(got, want.reshape(-1))
        nk = dict(gemm, b_layout="nk")
        got = measure.gemm_reference(nk, a.tobytes(), "f32", b_kn.T.copy().tobytes(), "f32", c0.tobytes(), "f32")
        np.testing.assert_array_equal(got, want.reshape(-1))

    def test_gemm_without_beta_ignores_c0(self):
        import numpy as np

        gemm = {"m": 1, "n": 1, "k": 1, "b_layout": "kn"}
        nan = np.array([np.nan], dtype=np.float32).tobytes()
        got = measure.gemm_reference(gemm, self.f32(3.0), "f32", self.f32(4.0), "f32", nan, "f32")
        self.assertEqual(list(got), [12.0])

    def test_a_gemm_check_uses_the_initial_buffers(self):
        buffers = {"a": {"dtype": "f32", "bytes": 8}, "b": {"dtype": "f32", "bytes": 8},
                   "c": {"dtype": "f32", "bytes": 4}}
        initial = {"a": self.f32(1.0, 2.0), "b": self.f32(3.0, 4.0), "c": None}
        check = {"buffer": "c", "gemm": {"m": 1, "n": 1, "k": 2, "a": "a", "b": "b", "b_layout": "nk",
                                          "beta": 1.0}, "rtol": 0, "atol": 0}
        self.assertEqual(measure.check_mismatches(check, self.f32(11.0), Path("."), buffers, initial), 0)
        self.assertEqual(measure.check_mismatches(check, self.f32(11.5), Path("."), buffers, initial), 1)

    def test_tf32_operand_rounding_drops_the_low_13_bits(self):
        import numpy as np

        a = struct.unpack("<f", struct.pack("<I", 0x3F801FFF))[0]  # 1 + (2**13 - 1) * 2**-23
        gemm = {"m": 1, "n": 1, "k": 1, "b_layout": "kn"}
        exact = measure.gemm_reference(gemm, self.f32(a), "f32", self.f32(1.0), "f32", b"", "f32")
        rounded = measure.gemm_reference(dict(gemm, operand_rounding="tf32"), self.f32(a), "f32",
                                         self.f32(1.0), "f32", b"", "f32")
        self.assertEqual(list(exact), [float(np.float32(a))])
        self.assertEqual(list(rounded), [1.0])

    def test_mismatches_are_reported_with_examples(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            n = measure.count_mismatches(self.f32(1.0, 2.5, 3.0), self.f32(1.0, 2.0, 4.0), "f32", 0, 0)
        self.assertEqual(n, 2)
        self.assertEqual(err.getvalue().splitlines(),
                         ["    element 1: got 2.5, want 2", "    element 2: got 3, want 4"])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            measure.count_mismatches(struct.pack("<I", 0x7FC00000), struct.pack("<I", 0x7FFFFFFF), "u32", 0, 0)
        self.assertEqual(err.getvalue().strip(), "element 0: got 0x7fc00000, want 0x7fffffff")

    def test_a_dump_line_decodes_the_buffer(self):
        buffer = {"name": "LAT", "dtype": "u64", "bytes": 16}
        self.assertEqual(measure.dump_line("traces/x.yaml", buffer, struct.pack("<2Q", 365, 2**63)),
                         f"dump: traces/x.yaml LAT = [365, {2**63}]")
        many = {"name": "f", "dtype": "f32", "bytes": 4 * 70}
        line = measure.dump_line("w", many, struct.pack("<70f", *range(70)))
        self.assertTrue(line.endswith(", 63.0, ... (70 values)]"), line)

    @needs_numpy
    def test_dump_dir_keeps_every_value(self):
        import numpy as np
        import tempfile

        buffer = {"name": "lat_4m", "dtype": "u32", "bytes": 4 * 100}
        with tempfile.TemporaryDirectory() as d:
            path = measure.save_dump(Path(d), "traces/microbench/l2_partition.yaml", buffer,
                                     struct.pack("<100I", *range(100)))
            self.assertEqual(path.name, "traces_microbench_l2_partition.yaml__lat_4m.npy")
            self.assertEqual(np.load(path).tolist(), list(range(100)))

    def test_random_fills_are_reproducible_and_in_range(self):
        import numpy as np

        first = measure.random_fill("f32", 1000, 7, -1.0, 1.0)
        self.assertEqual(first, measure.random_fill("f32", 1000, 7, -1.0, 1.0))
        values = np.frombuffer(first, dtype="<f4")
        self.assertTrue(((values >= -1.0) & (values < 1.0)).all())
        bf16 = measure.random_fill("bf16", 1000, 7, -1.0, 1.0)
        self.assertEqual(len(bf16), 2000)
        # bf16 keeps the upper 16 bits of the f32 values: truncation towards zero.
        np.testing.assert_array_equal(
            measure.decode_floats(bf16, "bf16"),
            (values.view("<u4") & 0xFFFF0000).view("<f4").astype(np.float64))
        self.assertEqual(len(measure.random_fill("f16", 10, 1, 0.0, 1.0)), 20)
        ints = np.frombuffer(measure.random_fill("i32", 1000, 3, -2.0, 2.0), dtype="<i4")
        self.assertEqual(set(ints.tolist()), {-2, -1, 0, 1})


class FakeDriver:
    """Just enough of cuda-python's driver module: memory is a dict of bytearrays and the one
    kernel, `copy_u32(dst, src, n)`, reads its parameters through the void** array."""

    CUresult = SimpleNamespace(CUDA_SUCCESS=0)
    CUfunction_attribute = SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="max-dynamic-shared")
    CUlaunchAttributeID = SimpleNamespace(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION="cluster-dimension")

    class _Names:
        def __getattr__(self, name):
            return name

    CUtensorMapDataType = CUtensorMapSwizzle = CUtensorMapFloatOOBfill = _Names()
    CUtensorMapInterleave = CUtensorMapL2promotion = _Names()
    cuuint64_t = cuuint32_t = int

    class CUlaunchConfig:
        pass

    class CUlaunchAttribute:
        def __init__(self):
            self.value = SimpleNamespace(clusterDim=SimpleNamespace(x=0, y=0, z=0))

    def __init__(self):
        self.memory, self.freed, self.calls, self.launches = {}, [], [], []
        self.next_address = 0x10000
        self.context_broken = False

    def __getattr__(self, name):
        # Calls without an effect here succeed and are recorded.
        def call(*args):
            self.calls.append((name, args))
            return (0,)
        return call

    def cuGetErrorName(self, status):
        return 0, {218: b"CUDA_ERROR_INVALID_PTX", 700: b"CUDA_ERROR_ILLEGAL_ADDRESS"}[status]

    def cuDeviceGet(self, ordinal):
        return 0, ordinal

    def cuDevicePrimaryCtxRetain(self, device):
        self.calls.append(("cuDevicePrimaryCtxRetain", (device,)))
        return 0, "context"

    def cuStreamCreate(self, flags):
        return 0, "stream"

    def cuEventCreate(self, flags):
        return 0, object()

    def cuDriverGetVersion(self):
        return 0, 12040

    def cuDeviceGetPCIBusId(self, length, device):
        return 0, b"0000:01:00.0\0" + b" " * (length - 13)

    def cuModuleLoadData(self, ptx):
        assert ptx.endswith(b"\0")
        return (218, None) if b"BROKEN" in ptx else (0, "module")

    def cuModuleGetFunction(self, module, name):
        return 0, name.decode()

    def cuMemAlloc(self, size):
        address = self.next_address
        self.memory[address] = bytearray(size)
        self.next_address += (size + 255) // 256 * 256 + 256
        return 0, address

    def cuMemsetD8(self, address, value, size):
        self.memory[address][:size] = bytes([value]) * size
        return (0,)

    def cuMemcpyHtoD(self, address, data, size):
        self.memory[address][:size] = bytes(data)[:size]
        return (0,)

    def cuMemcpyDtoH(self, host, address, size):
        host[:size] = self.memory[address][:size]
        return (0,)

    def cuMemFree(self, address):
        self.freed.append(address)
        return (0,)

    def cuTensorMapEncodeTiled(self, *args):
        self.calls.append(("cuTensorMapEncodeTiled", args))
        return 0, SimpleNamespace(opaque=list(range(16)))

    def cuLaunchKernelEx(self, config, function, params, extra):
        assert function == "copy_u32" and extra == 0
        pointers = (ctypes.c_void_p * 3).from_address(params)
        dst, src = (int.from_bytes(ctypes.string_at(p, 8), "little") for p in pointers[:2])
        count = int.from_bytes(ctypes.string_at(pointers[2], 4), "little")
        self.memory[dst][: 4 * count] = self.memory[src][: 4 * count]
        self.launches.append(config)
        return (0,)

    def cuEventElapsedTime(self, start, end):
        return 0, 0.0125

    def cuCtxSynchronize(self):
        return (700 if self.context_broken else 0),


class FakeNvml:
    @staticmethod
    def sample():
        return 1980, 2619, 300.0


@needs_numpy
class FakeDriverRunTests(PlanTestCase):
    def run_plan(self, workloads, expected=SOURCE):
        write_plan_dir(self.root, workloads, expected=expected)
        (self.root / "w1").mkdir()
        (self.root / "w1" / "kernel.ptx").write_text("BROKEN")
        plan = measure.load_plan(self.root)
        self.driver = FakeDriver()
        gpu = measure.Gpu(self.driver, 0)
        rows = []
        self.stderr = io.StringIO()
        with contextlib.redirect_stderr(self.stderr):
            passed = measure.measure_all(self.root, plan["workloads"], gpu, FakeNvml(), RUN_INFO,
                                         warmup=2, repeats=5, writer=rows.extend)
        return passed, [dict(zip(measure.CSV_COLUMNS, row)) for row in rows]

    def test_a_workload_is_checked_and_timed(self):
        passed, rows = self.run_plan([copy_workload()])
        self.assertTrue(passed)
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual((row["check"], row["mismatches"], row["median_us"], row["repeats"]),
                         ("pass", "0", "12.500", "5"))
        self.assertEqual((row["cluster"], row["sm_clock_mhz"], row["power_w_max"]), ("2x1x1", "1980.0", "300.00"))
        # Once for the check, twice warming up, five times timed.
        self.assertEqual(len(self.driver.launches), 8)
        config = self.driver.launches[0]
        self.assertEqual((config.gridDimX, config.blockDimX, config.sharedMemBytes, config.numAttrs),
                         (2, 128, 64 * 1024, 1))
        self.assertEqual(config.attrs[0].id, "cluster-dimension")
        self.assertEqual((config.attrs[0].value.clusterDim.x, config.attrs[0].value.clusterDim.y), (2, 1))
        names = [name for name, _ in self.driver.calls]
        self.assertIn("cuFuncSetAttribute", names)
        encodes = [args for name, args in self.driver.calls if name == "cuTensorMapEncodeTiled"]
        self.assertEqual(len(encodes), 2)
        self.assertEqual(encodes[0][:7], ("CU_TENSOR_MAP_DATA_TYPE_UINT32", 2, 0x10000, [4, 1], [16], [4, 1], [1, 1]))
        placed = [bytes(m) for m in self.driver.memory.values() if len(m) == 128]
        self.assertEqual(placed, [measure.tensor_map_bytes(range(16))])
        # Every allocation is freed: three buffers and the placed tensor map.
        self.assertEqual(sorted(self.driver.freed), sorted(self.driver.memory))

    def test_a_failing_check_and_a_failing_workload_do_not_stop_the_run(self):
        broken = copy_workload("traces/broken.yaml")
        broken["ptx"] = "w1/kernel.ptx"
        passed, rows = self.run_plan([copy_workload(), broken], expected=struct.pack("<4I", 1, 2, 0, 0))
        self.assertFalse(passed)
        self.assertEqual([(r["workload"], r["check"], r["mismatches"]) for r in rows],
                         [("traces/kernels/copy/copy.yaml", "fail", "2"), ("traces/broken.yaml", "error", "")])
        self.assertEqual(rows[1]["median_us"], "")
        self.assertIn("error: traces/broken.yaml: loading the PTX: cuModuleLoadData failed: "
                      "CUDA_ERROR_INVALID_PTX", self.stderr.getvalue())
        self.assertIn("check 0 (buffer c): 2 mismatches", self.stderr.getvalue())

    def test_a_broken_context_is_reset(self):
        driver = FakeDriver()
        gpu = measure.Gpu(driver, 0)
        driver.context_broken = True
        gpu.recover()
        names = [name for name, _ in driver.calls]
        self.assertEqual(names[-4:], ["cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxRelease",
                                      "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent"])

    def test_a_lost_context_resumes_in_a_new_process_at_the_next_workload(self):
        argv = ["plan", "--csv", "m.csv", "--resume-at", "3", "--repeats", "5"]
        command = measure.restart_command(argv, 7)
        self.assertEqual(command[0], sys.executable)
        self.assertTrue(command[1].endswith("measure.py"))
        self.assertEqual(command[2:], ["plan", "--csv", "m.csv", "--repeats", "5", "--resume-at", "7"])
        self.assertEqual(measure.restart_command(["plan", "--resume-at=2"], 4)[2:], ["plan", "--resume-at", "4"])

    def test_a_context_that_cannot_be_reset_stops_the_run_after_its_row(self):
        driver = FakeDriver()
        gpu = measure.Gpu(driver, 0)
        rows = []

        def fail(*args):
            raise measure.CudaError("boom")
        gpu.recover = fail
        broken = copy_workload("traces/broken.yaml")
        broken["ptx"] = "w1/kernel.ptx"
        write_plan_dir(self.root, [broken, copy_workload()])
        (self.root / "w1").mkdir()
        (self.root / "w1" / "kernel.ptx").write_text("BROKEN")
        plan = measure.load_plan(self.root)
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(measure.ContextLost) as lost:
                measure.measure_all(self.root, plan["workloads"], gpu, FakeNvml(), RUN_INFO,
                                    warmup=0, repeats=1, writer=rows.extend)
        self.assertEqual(lost.exception.next_index, 1)
        self.assertEqual([r[0] for r in rows], ["traces/broken.yaml"])

    def test_a_launch_without_a_cluster_has_no_attribute(self):
        gpu = measure.Gpu(FakeDriver(), 0)
        for cluster in (None, [1, 1, 1]):
            launch = {"grid": [3, 2, 1], "block": [32, 4, 1], "cluster": cluster, "shared_bytes": 0}
            prepared = gpu.prepare("k", launch, measure.KernelParams([]))
            self.assertEqual(prepared.config.numAttrs, 0)
            self.assertFalse(hasattr(prepared.config, "attrs"))
            self.assertEqual((prepared.config.gridDimY, prepared.config.blockDimY), (2, 4))

    def test_driver_errors_name_the_call_and_the_stage(self):
        gpu = measure.Gpu(FakeDriver(), 0)
        with self.assertRaisesRegex(measure.CudaError, r"^loading the PTX: cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX$"):
            with measure.annotate("loading the PTX"):
                gpu.load_module(b"BROKEN\0")


if __name__ == "__main__":
    unittest.main()
