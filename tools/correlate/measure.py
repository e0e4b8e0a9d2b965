#!/usr/bin/env python3
"""Run the workloads `gpusim export` wrote on a real NVIDIA GPU and time every launch.

    python3 tools/correlate/measure.py PLAN_DIR --csv measured.csv [--warmup 3] [--repeats 20]
        [--only SUBSTRING ...] [--device 0] [--no-install]

For each workload of PLAN_DIR/plan.json (format gpusim-export/1): load its PTX with the driver
API, allocate and initialise its buffers, run its launches once in order and compare the
checked buffers with the expected values (gpusim's rules), then time each launch with CUDA
events while a thread samples clocks and power through NVML. One CSV row per launch; the
run's settings (GPU, driver, clocks) also go to a `.run.json` file next to the CSV.

Exit status: 0 all workloads ran and passed their checks, 1 a workload failed or a check
did not pass, 2 bad input (the plan, the options, missing packages with --no-install).

Only the standard library is needed to import this module: cuda-python, nvidia-ml-py and
numpy are imported where they are used (and installed at start unless --no-install), so
the plan, parameter and CSV logic can be tested on machines without them.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import ctypes
import importlib
import json
import math
import re
import site
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

PLAN_FORMAT = "gpusim-export/1"

CSV_COLUMNS = [
    "workload", "launch", "entry", "grid", "block", "cluster",
    "median_us", "min_us", "max_us", "repeats", "check", "mismatches",
    "sm_clock_mhz", "mem_clock_mhz", "power_w_mean", "power_w_max", "power_limit_w",
    "gpu", "driver", "cuda_driver", "timestamp",
]

# Above this a kernel must opt in to more dynamic shared memory (CUDA programming guide,
# "Shared Memory" of compute capability 7.x and later).
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
TENSOR_MAP_BYTES = 128
NVML_SAMPLE_PERIOD_S = 0.005

# Buffer dtypes: the numpy type of one element as stored (little-endian) and its size.
# bf16 is kept as its raw 16 bits: the upper half of an f32.
BUFFER_DTYPES = {
    "u8": ("<u1", 1), "i8": ("<i1", 1),
    "u16": ("<u2", 2), "i16": ("<i2", 2),
    "u32": ("<u4", 4), "i32": ("<i4", 4),
    "u64": ("<u8", 8), "i64": ("<i8", 8),
    "f16": ("<f2", 2), "bf16": ("<u2", 2),
    "f32": ("<f4", 4), "f64": ("<f8", 8),
}
FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}

# Plan spellings to cuda-python enum member names.
TENSOR_MAP_DTYPES = {
    "u8": "CU_TENSOR_MAP_DATA_TYPE_UINT8",
    "u16": "CU_TENSOR_MAP_DATA_TYPE_UINT16",
    "u32": "CU_TENSOR_MAP_DATA_TYPE_UINT32",
    "s32": "CU_TENSOR_MAP_DATA_TYPE_INT32",
    "u64": "CU_TENSOR_MAP_DATA_TYPE_UINT64",
    "s64": "CU_TENSOR_MAP_DATA_TYPE_INT64",
    "f16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    "f32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
    "f64": "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
    "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
    "tf32": "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32",
}
TENSOR_MAP_SWIZZLES = {
    "none": "CU_TENSOR_MAP_SWIZZLE_NONE",
    "32B": "CU_TENSOR_MAP_SWIZZLE_32B",
    "64B": "CU_TENSOR_MAP_SWIZZLE_64B",
    "128B": "CU_TENSOR_MAP_SWIZZLE_128B",
}
TENSOR_MAP_OOB_FILLS = {
    "zero": "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
    "nan": "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA",
}
TENSOR_MAP_MAX_RANK = 5

BUFFER_FILLS = ("file", "zeros", "random")
PARAM_KINDS = ("pointer", "hex", "tensor_map", "tensor_map_pointer")
CHECK_KINDS = ("expected", "gemm")


class PlanError(Exception):
    """plan.json or a file it names is not what the format says."""


class SetupError(Exception):
    """The Python packages the measurement needs are missing and could not be installed."""


class CudaError(Exception):
    """A driver call failed; the message names the call (and, once annotated, where)."""


# ----------------------------------------------------------------------------------------
# Plan loading and validation
# ----------------------------------------------------------------------------------------


def load_plan(plan_dir: Path) -> dict:
    """Read and validate PLAN_DIR/plan.json; every error names the offending key."""
    path = Path(plan_dir) / "plan.json"
    try:
        text = path.read_text()
    except OSError as e:
        raise PlanError(f"{path}: cannot read ({e.strerror})") from None
    try:
        plan = json.loads(text)
    except json.JSONDecodeError as e:
        raise PlanError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    try:
        _validate_plan(plan, Path(plan_dir))
    except PlanError as e:
        raise PlanError(f"{path}: {e}") from None
    return plan


def _validate_plan(plan, plan_dir: Path) -> None:
    if _field(plan, "format", "") != PLAN_FORMAT:
        raise PlanError(f"format: expected {PLAN_FORMAT!r}, got {plan['format']!r}")
    workloads = _list(_field(plan, "workloads", ""), "workloads")
    for i, workload in enumerate(workloads):
        _validate_workload(workload, f"workloads[{i}]", plan_dir)


def _validate_workload(workload, where: str, plan_dir: Path) -> None:
    _string(_field(workload, "workload", where), f"{where}.workload")
    _existing_file(plan_dir, _field(workload, "ptx", where), f"{where}.ptx")
    buffers = {}
    for i, buffer in enumerate(_list(_field(workload, "buffers", where), f"{where}.buffers")):
        name = _validate_buffer(buffer, f"{where}.buffers[{i}]", plan_dir)
        if name in buffers:
            raise PlanError(f"{where}.buffers[{i}].name: {name!r} is used twice")
        buffers[name] = buffer
    launches = _list(_field(workload, "launches", where), f"{where}.launches")
    for i, launch in enumerate(launches):
        _validate_launch(launch, f"{where}.launches[{i}]", buffers)
    workload.setdefault("checks", [])
    for i, check in enumerate(_list(workload["checks"], f"{where}.checks")):
        _validate_check(check, f"{where}.checks[{i}]", plan_dir, buffers)


def _validate_buffer(buffer, where: str, plan_dir: Path) -> str:
    name = _string(_field(buffer, "name", where), f"{where}.name")
    dtype = _choice(_field(buffer, "dtype", where), BUFFER_DTYPES, f"{where}.dtype")
    for i, extent in enumerate(_list(_field(buffer, "shape", where), f"{where}.shape")):
        _integer(extent, f"{where}.shape[{i}]")
    size = _integer(_field(buffer, "bytes", where), f"{where}.bytes", minimum=1)
    fill = _exactly_one(buffer, BUFFER_FILLS, where)
    if fill == "file":
        path = _existing_file(plan_dir, buffer["file"], f"{where}.file")
        if path.stat().st_size != size:
            raise PlanError(f"{where}.file: {path} has {path.stat().st_size} bytes, the buffer {size}")
    elif fill == "zeros":
        if buffer["zeros"] is not True:
            raise PlanError(f"{where}.zeros: expected true")
    else:
        _validate_random(buffer["random"], f"{where}.random", dtype, size)
    return name


def _validate_random(random, where: str, dtype: str, size: int) -> None:
    _integer(_field(random, "seed", where), f"{where}.seed")
    low = _number(_field(random, "low", where), f"{where}.low")
    high = _number(_field(random, "high", where), f"{where}.high")
    if size % BUFFER_DTYPES[dtype][1]:
        raise PlanError(f"{where}: {size} bytes is not a whole number of {dtype} elements")
    empty = low >= high if dtype in FLOAT_DTYPES else math.ceil(low) >= math.ceil(high)
    if empty:
        raise PlanError(f"{where}: [low, high) = [{low}, {high}) holds no {dtype} value")


def _validate_launch(launch, where: str, buffers: dict) -> None:
    _string(_field(launch, "entry", where), f"{where}.entry")
    _dim3(_field(launch, "grid", where), f"{where}.grid")
    _dim3(_field(launch, "block", where), f"{where}.block")
    if _field(launch, "cluster", where) is not None:
        _dim3(launch["cluster"], f"{where}.cluster")
    _integer(_field(launch, "shared_bytes", where), f"{where}.shared_bytes")
    for i, param in enumerate(_list(_field(launch, "params", where), f"{where}.params")):
        _validate_param(param, f"{where}.params[{i}]", buffers)


def _validate_param(param, where: str, buffers: dict) -> None:
    _integer(_field(param, "offset", where), f"{where}.offset")
    size = _integer(_field(param, "size", where), f"{where}.size", minimum=1)
    kind = _exactly_one(param, PARAM_KINDS, where)
    if kind == "hex":
        try:
            literal = bytes.fromhex(_string(param["hex"], f"{where}.hex"))
        except ValueError:
            raise PlanError(f"{where}.hex: not hexadecimal: {param['hex']!r}") from None
        if len(literal) != size:
            raise PlanError(f"{where}.hex: {len(literal)} bytes, the parameter has {size}")
        return
    # A .param may be wider than its value (gpusim accepts that); param_bytes pads it.
    least = TENSOR_MAP_BYTES if kind == "tensor_map" else 8
    if size < least:
        raise PlanError(f"{where}.size: a {kind} parameter needs {least} bytes, this one has {size}")
    if kind == "pointer":
        _buffer_name(param["pointer"], buffers, f"{where}.pointer")
    else:
        _validate_tensor_map(param[kind], f"{where}.{kind}", buffers)


def _validate_tensor_map(tm, where: str, buffers: dict) -> None:
    _buffer_name(_field(tm, "buffer", where), buffers, f"{where}.buffer")
    _choice(_field(tm, "dtype", where), TENSOR_MAP_DTYPES, f"{where}.dtype")
    dims = _list(_field(tm, "dims", where), f"{where}.dims")
    rank = len(dims)
    if not 1 <= rank <= TENSOR_MAP_MAX_RANK:
        raise PlanError(f"{where}.dims: rank {rank}, a tensor map has 1 to {TENSOR_MAP_MAX_RANK}")
    lengths = {"dims": rank, "strides": rank - 1, "box": rank, "element_strides": rank}
    for key, length in lengths.items():
        values = _list(_field(tm, key, where), f"{where}.{key}")
        if len(values) != length:
            raise PlanError(f"{where}.{key}: {len(values)} entries, rank {rank} needs {length}")
        for i, value in enumerate(values):
            _integer(value, f"{where}.{key}[{i}]", minimum=1)
    _choice(_field(tm, "swizzle", where), TENSOR_MAP_SWIZZLES, f"{where}.swizzle")
    _choice(_field(tm, "oob_fill", where), TENSOR_MAP_OOB_FILLS, f"{where}.oob_fill")
    _choice(_field(tm, "interleave", where), ("none",), f"{where}.interleave")
    _choice(_field(tm, "l2_promotion", where), ("none",), f"{where}.l2_promotion")


def _validate_check(check, where: str, plan_dir: Path, buffers: dict) -> None:
    buffer = buffers[_buffer_name(_field(check, "buffer", where), buffers, f"{where}.buffer")]
    for key in ("rtol", "atol"):
        if key in check and _number(check[key], f"{where}.{key}") < 0:
            raise PlanError(f"{where}.{key}: must not be negative")
    if _exactly_one(check, CHECK_KINDS, where) == "gemm":
        _validate_gemm(check["gemm"], f"{where}.gemm", buffers, buffer)
        return
    dtype = _choice(_field(check, "dtype", where), BUFFER_DTYPES, f"{where}.dtype")
    path = _existing_file(plan_dir, check["expected"], f"{where}.expected")
    length, element = path.stat().st_size, BUFFER_DTYPES[dtype][1]
    if length % element or length > buffer["bytes"]:
        raise PlanError(
            f"{where}.expected: {path} has {length} bytes: not whole {dtype} elements "
            f"within the {buffer['bytes']} bytes of buffer {buffer['name']!r}"
        )


def _validate_gemm(gemm, where: str, buffers: dict, c_buffer: dict) -> None:
    m, n, k = (_integer(_field(gemm, key, where), f"{where}.{key}", minimum=1) for key in "mnk")
    _choice(_field(gemm, "b_layout", where), ("kn", "nk"), f"{where}.b_layout")
    if "operand_rounding" in gemm:
        _choice(gemm["operand_rounding"], tuple(OPERAND_ROUNDINGS), f"{where}.operand_rounding")
    for key in ("alpha", "beta"):
        if key in gemm:
            _number(gemm[key], f"{where}.{key}")
    a = buffers[_buffer_name(_field(gemm, "a", where), buffers, f"{where}.a")]
    b = buffers[_buffer_name(_field(gemm, "b", where), buffers, f"{where}.b")]
    for key, buffer, elements in (("a", a, m * k), ("b", b, k * n), ("buffer", c_buffer, m * n)):
        if buffer["dtype"] not in FLOAT_DTYPES:
            raise PlanError(f"{where}.{key}: buffer {buffer['name']!r} is {buffer['dtype']}, a GEMM check needs floats")
        if buffer["bytes"] != elements * BUFFER_DTYPES[buffer["dtype"]][1]:
            raise PlanError(
                f"{where}.{key}: buffer {buffer['name']!r} has {buffer['bytes']} bytes, "
                f"not {elements} {buffer['dtype']} elements (m={m} n={n} k={k})"
            )


def _field(obj, key: str, where: str):
    """obj[key]; `where` is the path of obj in the plan ("" for the top level)."""
    if not isinstance(obj, dict):
        raise PlanError(f"{where or 'the plan'}: expected an object")
    if key not in obj:
        raise PlanError(f"{where + '.' if where else ''}{key}: missing")
    return obj[key]


def _exactly_one(obj: dict, keys, where: str) -> str:
    present = [key for key in keys if key in obj]
    if len(present) != 1:
        raise PlanError(f"{where}: needs exactly one of {', '.join(keys)}; has {present or 'none'}")
    return present[0]


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise PlanError(f"{where}: expected a list")
    return value


def _string(value, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise PlanError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _integer(value, where: str, minimum: int = 0) -> int:
    # bool is an int in Python; `true` is not a size.
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlanError(f"{where}: expected an integer >= {minimum}, got {value!r}")
    return value


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PlanError(f"{where}: expected a number, got {value!r}")
    return value


def _choice(value, choices, where: str):
    if value not in choices:
        raise PlanError(f"{where}: {value!r} is not one of {', '.join(choices)}")
    return value


def _dim3(value, where: str) -> list:
    if len(_list(value, where)) != 3:
        raise PlanError(f"{where}: expected [x, y, z], got {value!r}")
    for i, extent in enumerate(value):
        _integer(extent, f"{where}[{i}]", minimum=1)
    return value


def _buffer_name(value, buffers: dict, where: str) -> str:
    if value not in buffers:
        raise PlanError(f"{where}: no buffer named {value!r}")
    return value


def _existing_file(plan_dir: Path, relative, where: str) -> Path:
    path = plan_dir / _string(relative, where)
    if not path.is_file():
        raise PlanError(f"{where}: {path} does not exist")
    return path


def select_workloads(workloads: list, substrings: Optional[list]) -> list:
    """The workloads whose name contains one of `substrings` (all of them without any)."""
    if not substrings:
        return list(workloads)
    return [w for w in workloads if any(s in w["workload"] for s in substrings)]


def read_ptx(plan_dir: Path, workload: dict) -> bytes:
    """The PTX as cuModuleLoadData takes it: NUL-terminated text."""
    ptx = (Path(plan_dir) / workload["ptx"]).read_bytes()
    return ptx if ptx.endswith(b"\0") else ptx + b"\0"


# ----------------------------------------------------------------------------------------
# Kernel parameters
# ----------------------------------------------------------------------------------------

EncodeTensorMap = Callable[[dict, int], bytes]
PlaceTensorMap = Callable[[bytes], int]


def param_bytes(
    param: dict,
    addresses: dict,
    encode_tensor_map: EncodeTensorMap,
    place_tensor_map: PlaceTensorMap,
) -> bytes:
    """The bytes of one kernel parameter, zero-padded to its size.

    `addresses` maps buffer names to device addresses; `encode_tensor_map(tm, address)`
    returns the 128 bytes of a CUtensorMap over the buffer at `address`;
    `place_tensor_map(map_bytes)` copies a map to device memory and returns its address.
    """
    if "pointer" in param:
        value = addresses[param["pointer"]].to_bytes(8, "little")
    elif "hex" in param:
        value = bytes.fromhex(param["hex"])
    else:
        kind = "tensor_map" if "tensor_map" in param else "tensor_map_pointer"
        tm = param[kind]
        value = encode_tensor_map(tm, addresses[tm["buffer"]])
        if len(value) != TENSOR_MAP_BYTES:
            raise ValueError(f"an encoded tensor map has {len(value)} bytes, not {TENSOR_MAP_BYTES}")
        if kind == "tensor_map_pointer":
            value = place_tensor_map(value).to_bytes(8, "little")
    return value.ljust(param["size"], b"\0")


def launch_param_bytes(
    launch: dict,
    addresses: dict,
    encode_tensor_map: EncodeTensorMap,
    place_tensor_map: PlaceTensorMap,
) -> list:
    return [param_bytes(p, addresses, encode_tensor_map, place_tensor_map) for p in launch["params"]]


def tensor_map_bytes(opaque) -> bytes:
    """The 128 bytes of a CUtensorMap from its 16 64-bit words (cuda-python's `opaque`)."""
    words = [int(word) for word in opaque]
    if len(words) * 8 != TENSOR_MAP_BYTES:
        raise ValueError(f"a CUtensorMap has 16 words, got {len(words)}")
    return b"".join(word.to_bytes(8, "little") for word in words)


class KernelParams:
    """The void** array cuLaunchKernelEx reads: one host buffer per parameter.

    The driver copies each parameter from its buffer at launch time, so the buffers must
    live as long as any launch that uses them: this object owns them.
    """

    def __init__(self, blobs: list):
        self._buffers = [ctypes.create_string_buffer(blob, len(blob)) for blob in blobs]
        self._pointers = (ctypes.c_void_p * len(blobs))(*(ctypes.addressof(b) for b in self._buffers))

    @property
    def address(self) -> int:
        """The address to pass as kernelParams (0 for a kernel without parameters)."""
        return ctypes.addressof(self._pointers) if self._buffers else 0


def cluster_dims(launch: dict) -> Optional[list]:
    """The cluster shape to request, or None where a launch needs no cluster attribute."""
    cluster = launch["cluster"]
    return None if cluster is None or list(cluster) == [1, 1, 1] else list(cluster)


def dynamic_shared_by_entry(launches: list) -> dict:
    """For each entry, the most dynamic shared memory any of its launches asks for."""
    most: dict = {}
    for launch in launches:
        most[launch["entry"]] = max(most.get(launch["entry"], 0), launch["shared_bytes"])
    return most


# ----------------------------------------------------------------------------------------
# Buffer contents and checks (numpy)
# ----------------------------------------------------------------------------------------


def initial_contents(plan_dir: Path, buffer: dict) -> Optional[bytes]:
    """A buffer's initial bytes; None for a zero buffer (cuMemsetD8 fills it on the device)."""
    if "zeros" in buffer:
        return None
    if "file" in buffer:
        return (Path(plan_dir) / buffer["file"]).read_bytes()
    random = buffer["random"]
    count = buffer["bytes"] // BUFFER_DTYPES[buffer["dtype"]][1]
    return random_fill(buffer["dtype"], count, random["seed"], random["low"], random["high"])


def random_fill(dtype: str, count: int, seed: int, low: float, high: float) -> bytes:
    """`count` uniform values of `dtype` in [low, high), reproducible from `seed`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    code = BUFFER_DTYPES[dtype][0]
    if dtype not in FLOAT_DTYPES:
        values = rng.integers(math.ceil(low), math.ceil(high), size=count, dtype=np.int64)
        return values.astype(code).tobytes()
    values = rng.uniform(low, high, size=count)
    if dtype == "bf16":
        return (values.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    return values.astype(code).tobytes()


def decode_floats(raw: bytes, dtype: str):
    """Float elements of `dtype` as a float64 array."""
    import numpy as np

    if dtype == "bf16":
        bits = np.frombuffer(raw, dtype="<u2").astype("<u4") << 16
        return bits.view("<f4").astype(np.float64)
    return np.frombuffer(raw, dtype=BUFFER_DTYPES[dtype][0]).astype(np.float64)


MISMATCH_EXAMPLES = 6
DUMP_VALUES = 64


def report_examples(bad, got, want, show=repr) -> None:
    """The first few mismatching elements on stderr: a count alone says nothing about why."""
    for i in bad[:MISMATCH_EXAMPLES]:
        print(f"    element {int(i)}: got {show(got[i])}, want {show(want[i])}", file=sys.stderr)


def count_float_mismatches(got, want, rtol: float, atol: float) -> int:
    """gpusim's float rule: equal, both NaN, or |got - want| <= atol + rtol*|want|."""
    import numpy as np

    with np.errstate(invalid="ignore", over="ignore"):
        ok = (
            (np.isnan(got) & np.isnan(want))
            | (got == want)
            | (np.abs(got - want) <= atol + rtol * np.abs(want))
        )
    bad = np.flatnonzero(~ok)
    report_examples(bad, got, want, lambda v: f"{float(v):.9g}")
    return int(bad.size)


def count_mismatches(got: bytes, expected: bytes, dtype: str, rtol: float, atol: float) -> int:
    """Elements of `got` that do not match `expected` (both raw bytes of `dtype`)."""
    import numpy as np

    if dtype in FLOAT_DTYPES:
        return count_float_mismatches(decode_floats(got, dtype), decode_floats(expected, dtype), rtol, atol)
    code = BUFFER_DTYPES[dtype][0]
    got_values, want_values = np.frombuffer(got, dtype=code), np.frombuffer(expected, dtype=code)
    bad = np.flatnonzero(got_values != want_values)
    report_examples(bad, got_values, want_values, lambda v: hex(int(v)))
    return int(bad.size)


def truncate_to_tf32(values):
    """What the tensor cores multiply of f32 operands in tf32 mode: the low 13 mantissa bits
    dropped (PTX ISA, `.tf32`), as gpusim's own reference does."""
    import numpy as np

    bits = values.astype("<f4").view("<u4") & np.uint32(0xFFFFE000)
    return bits.view("<f4").astype(np.float64)


OPERAND_ROUNDINGS = {"none": lambda values: values, "tf32": truncate_to_tf32}


def gemm_reference(gemm: dict, a: bytes, a_dtype: str, b: bytes, b_dtype: str, c0: bytes, c_dtype: str):
    """alpha*A@B + beta*C0 in float64, flattened row-major (m x n)."""
    m, n, k = gemm["m"], gemm["n"], gemm["k"]
    rounding = gemm.get("operand_rounding", "none")
    a_matrix = OPERAND_ROUNDINGS[rounding](decode_floats(a, a_dtype)).reshape(m, k)
    b_values = OPERAND_ROUNDINGS[rounding](decode_floats(b, b_dtype))
    b_matrix = b_values.reshape(k, n) if gemm["b_layout"] == "kn" else b_values.reshape(n, k).T
    want = gemm.get("alpha", 1.0) * (a_matrix @ b_matrix)
    beta = gemm.get("beta", 0.0)
    # Skipped at beta 0 so that an uninitialised C0 (NaN, inf) does not leak in as 0*NaN.
    if beta != 0:
        want = want + beta * decode_floats(c0, c_dtype).reshape(m, n)
    return want.reshape(-1)


def check_mismatches(check: dict, got: bytes, plan_dir: Path, buffers: dict, initial: dict) -> int:
    """Mismatches of one check; `got` is the checked buffer's bytes after the launches,
    `initial` the initial bytes by buffer name (None for zeros)."""
    rtol, atol = check.get("rtol", 0.0), check.get("atol", 0.0)
    if "gemm" in check:
        gemm = check["gemm"]

        def before(name: str) -> bytes:
            contents = initial[name]
            return bytes(buffers[name]["bytes"]) if contents is None else contents

        c_dtype = buffers[check["buffer"]]["dtype"]
        want = gemm_reference(
            gemm,
            before(gemm["a"]), buffers[gemm["a"]]["dtype"],
            before(gemm["b"]), buffers[gemm["b"]]["dtype"],
            before(check["buffer"]), c_dtype,
        )
        return count_float_mismatches(decode_floats(got, c_dtype), want, rtol, atol)
    expected = (Path(plan_dir) / check["expected"]).read_bytes()
    # Like gpusim, an expectation shorter than the buffer checks the buffer's first bytes.
    return count_mismatches(got[: len(expected)], expected, check["dtype"], rtol, atol)


# ----------------------------------------------------------------------------------------
# Statistics and CSV rows
# ----------------------------------------------------------------------------------------


@dataclass
class LaunchTiming:
    times_us: list
    sm_clock_mhz: Optional[float] = None
    mem_clock_mhz: Optional[float] = None
    power_w_mean: Optional[float] = None
    power_w_max: Optional[float] = None


@dataclass
class WorkloadOutcome:
    check: str  # pass | fail | none | error
    mismatches: Optional[int] = None
    timings: list = field(default_factory=list)  # one LaunchTiming per launch; empty on error


def time_summary(times_us: list) -> tuple:
    """(median, min, max) of the timed repeats."""
    return statistics.median(times_us), min(times_us), max(times_us)


def mean_of(values) -> Optional[float]:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def summarize_samples(samples: list) -> dict:
    """Clock and power figures from NVML samples (sm MHz, mem MHz, power W; None = unread)."""
    powers = [s[2] for s in samples if s[2] is not None]
    return {
        "sm_clock_mhz": mean_of(s[0] for s in samples),
        "mem_clock_mhz": mean_of(s[1] for s in samples),
        "power_w_mean": mean_of(powers),
        "power_w_max": max(powers) if powers else None,
    }


def dim3_text(dims) -> str:
    return "" if dims is None else "x".join(str(d) for d in dims)


def fixed(value: Optional[float], digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def format_cuda_version(version: int) -> str:
    """cuDriverGetVersion's 1000*major + 10*minor as `major.minor`."""
    return f"{version // 1000}.{version % 1000 // 10}"


def csv_row(
    workload: str,
    index: int,
    launch: dict,
    outcome: WorkloadOutcome,
    timing: Optional[LaunchTiming],
    run_info: dict,
) -> list:
    """One CSV row (CSV_COLUMNS order); `timing` is None for a workload that failed."""
    if timing is None:
        timed = ["", "", "", ""]
        readings = ["", "", "", ""]
    else:
        median, low, high = time_summary(timing.times_us)
        timed = [fixed(median, 3), fixed(low, 3), fixed(high, 3), str(len(timing.times_us))]
        readings = [
            fixed(timing.sm_clock_mhz, 1), fixed(timing.mem_clock_mhz, 1),
            fixed(timing.power_w_mean, 2), fixed(timing.power_w_max, 2),
        ]
    return [
        workload, str(index), launch["entry"],
        dim3_text(launch["grid"]), dim3_text(launch["block"]), dim3_text(launch["cluster"]),
        *timed,
        outcome.check, "" if outcome.mismatches is None else str(outcome.mismatches),
        *readings,
        fixed(run_info.get("power_limit_w"), 1),
        run_info.get("gpu", ""), run_info.get("driver", ""),
        run_info.get("cuda_driver", ""), run_info.get("timestamp", ""),
    ]


def workload_rows(workload: dict, outcome: WorkloadOutcome, run_info: dict) -> list:
    timings = outcome.timings or [None] * len(workload["launches"])
    return [
        csv_row(workload["workload"], i, launch, outcome, timing, run_info)
        for i, (launch, timing) in enumerate(zip(workload["launches"], timings))
    ]


def progress_line(position: str, workload: dict, outcome: WorkloadOutcome) -> str:
    medians = [
        f"#{i} {launch['entry']} {time_summary(t.times_us)[0]:.3f} us"
        for i, (launch, t) in enumerate(zip(workload["launches"], outcome.timings))
    ]
    check = outcome.check if outcome.check != "fail" else f"fail ({outcome.mismatches} mismatches)"
    return f"[{position}] {workload['workload']}: check {check}" + ("; " + ", ".join(medians) if medians else "")


def run_info_path(csv_path: Path) -> Path:
    return Path(csv_path).with_suffix(".run.json")


# ----------------------------------------------------------------------------------------
# Python packages
# ----------------------------------------------------------------------------------------


def import_driver():
    """cuda-python's driver module (its location moved in cuda-python 12.6)."""
    try:
        from cuda.bindings import driver
    except ImportError:
        from cuda import cuda as driver
    return driver


def missing_packages() -> list:
    """The pip names of the packages that do not import."""
    importers = {
        "cuda-python": import_driver,
        "nvidia-ml-py": lambda: importlib.import_module("pynvml"),
        "numpy": lambda: importlib.import_module("numpy"),
    }
    missing = []
    for package, load in importers.items():
        try:
            load()
        except ImportError:
            missing.append(package)
    return missing


def installed_cuda_driver_version() -> Optional[int]:
    """The CUDA version of the installed driver (e.g. 12040), read with ctypes, or None."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return version.value


def pip_requirement(package: str, cuda_driver_version: Optional[int]) -> str:
    # cuda-python's major version follows CUDA's, and 13.x bindings need a CUDA 13 driver:
    # without the pin pip would install bindings the driver cannot serve.
    if package == "cuda-python" and cuda_driver_version:
        return f"cuda-python<{cuda_driver_version // 1000 + 1}"
    return package


def in_virtualenv() -> bool:
    return sys.prefix != sys.base_prefix


def pip_install_command(requirements: list, in_venv: bool, break_system_packages: bool) -> list:
    command = [sys.executable, "-m", "pip", "install"]
    if not in_venv:
        command.append("--user")
    if break_system_packages:
        command.append("--break-system-packages")
    return command + requirements


def refused_by_pep668(pip_output: str) -> bool:
    return "externally-managed-environment" in pip_output


def run_pip(command: list) -> subprocess.CompletedProcess:
    print("measure.py: " + " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(done.stdout + done.stderr)
    return done


def install_packages(requirements: list) -> None:
    venv = in_virtualenv()
    done = run_pip(pip_install_command(requirements, venv, break_system_packages=False))
    if done.returncode != 0 and refused_by_pep668(done.stdout + done.stderr):
        done = run_pip(pip_install_command(requirements, venv, break_system_packages=True))
    if done.returncode != 0:
        raise SetupError(f"pip could not install {', '.join(requirements)} (exit {done.returncode})")
    # A user site directory created just now is not on sys.path yet.
    if not venv:
        site.addsitedir(site.getusersitepackages())
    importlib.invalidate_caches()


def ensure_packages(no_install: bool) -> None:
    missing = missing_packages()
    if not missing:
        return
    driver_version = installed_cuda_driver_version()
    requirements = [pip_requirement(package, driver_version) for package in missing]
    if no_install:
        quoted = " ".join(f"'{r}'" for r in requirements)
        raise SetupError(
            f"missing Python packages: {', '.join(missing)} (--no-install given); install them with "
            f"`python3 -m pip install --user {quoted}`"
        )
    install_packages(requirements)
    still_missing = missing_packages()
    if still_missing:
        raise SetupError(f"installed, but still cannot import: {', '.join(still_missing)}")


# ----------------------------------------------------------------------------------------
# The driver (cuda-python)
# ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def annotate(where: str):
    """Prefix driver errors raised inside with `where` (a launch, a buffer, a stage)."""
    try:
        yield
    except CudaError as e:
        raise CudaError(f"{where}: {e}") from None


def launch_label(index: int, launch: dict) -> str:
    return f"launch {index} ({launch['entry']})"


@dataclass
class PreparedLaunch:
    function: object
    config: object
    params: KernelParams
    attributes: list  # referenced by config; kept alive with it


class Gpu:
    """The driver calls the measurement makes, each one checked.

    `driver` is cuda-python's driver module (a stand-in in the tests). Device addresses
    are plain ints throughout.
    """

    def __init__(self, driver, ordinal: int):
        self.driver = driver
        self._call("cuInit", 0)
        self.device = self._call("cuDeviceGet", ordinal)
        self._open_context()

    def _call(self, name: str, *args):
        # cuda-python returns (CUresult, outputs...): at most one output for the calls made here.
        status, *outputs = getattr(self.driver, name)(*args)
        if status != self.driver.CUresult.CUDA_SUCCESS:
            raise CudaError(f"{name} failed: {self._error_name(status)}")
        return outputs[0] if outputs else None

    def _error_name(self, status) -> str:
        try:
            found, name = self.driver.cuGetErrorName(status)
        except Exception:  # an unknown code must not hide the failure being reported
            return str(status)
        if found != self.driver.CUresult.CUDA_SUCCESS:
            return str(status)
        return _text(name)

    def _open_context(self) -> None:
        self.context = self._call("cuDevicePrimaryCtxRetain", self.device)
        self._call("cuCtxSetCurrent", self.context)
        self.stream = self._call("cuStreamCreate", 0)
        self.start_event = self._call("cuEventCreate", 0)
        self.end_event = self._call("cuEventCreate", 0)

    def cuda_driver_version(self) -> int:
        return int(self._call("cuDriverGetVersion"))

    def pci_bus_id(self) -> str:
        raw = self._call("cuDeviceGetPCIBusId", 64, self.device)
        # The binding hands back the whole buffer: the id ends at the first NUL.
        return _text(raw).split("\0")[0]

    def load_module(self, ptx: bytes):
        return self._call("cuModuleLoadData", ptx)

    def function(self, module, entry: str):
        return self._call("cuModuleGetFunction", module, entry.encode())

    def allow_dynamic_shared(self, function, size: int) -> None:
        attribute = self.driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        self._call("cuFuncSetAttribute", function, attribute, size)

    def alloc(self, size: int) -> int:
        return int(self._call("cuMemAlloc", size))

    def zero(self, address: int, size: int) -> None:
        self._call("cuMemsetD8", address, 0, size)

    def upload(self, address: int, data: bytes) -> None:
        self._call("cuMemcpyHtoD", address, data, len(data))

    def download(self, address: int, size: int) -> bytes:
        host = bytearray(size)
        self._call("cuMemcpyDtoH", host, address, size)
        return bytes(host)

    def encode_tensor_map(self, tm: dict, address: int) -> bytes:
        d = self.driver
        tensor_map = self._call(
            "cuTensorMapEncodeTiled",
            getattr(d.CUtensorMapDataType, TENSOR_MAP_DTYPES[tm["dtype"]]),
            len(tm["dims"]),
            address,
            [d.cuuint64_t(v) for v in tm["dims"]],
            [d.cuuint64_t(v) for v in tm["strides"]],
            [d.cuuint32_t(v) for v in tm["box"]],
            [d.cuuint32_t(v) for v in tm["element_strides"]],
            d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(d.CUtensorMapSwizzle, TENSOR_MAP_SWIZZLES[tm["swizzle"]]),
            d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            getattr(d.CUtensorMapFloatOOBfill, TENSOR_MAP_OOB_FILLS[tm["oob_fill"]]),
        )
        return tensor_map_bytes(tensor_map.opaque)

    def prepare(self, function, launch: dict, params: KernelParams) -> PreparedLaunch:
        """The CUlaunchConfig of a launch, built once and reused by every repeat."""
        d = self.driver
        config = d.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = launch["grid"]
        config.blockDimX, config.blockDimY, config.blockDimZ = launch["block"]
        config.sharedMemBytes = launch["shared_bytes"]
        config.hStream = self.stream
        cluster = cluster_dims(launch)
        attributes = [] if cluster is None else [self._cluster_attribute(cluster)]
        # A fresh config's attrs is NULL; it is only set when there is something to point at.
        if attributes:
            config.attrs = attributes
        config.numAttrs = len(attributes)
        return PreparedLaunch(function, config, params, attributes)

    def _cluster_attribute(self, cluster: list):
        d = self.driver
        attribute = d.CUlaunchAttribute()
        attribute.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dim = attribute.value.clusterDim
        dim.x, dim.y, dim.z = cluster
        return attribute

    def launch(self, prepared: PreparedLaunch) -> None:
        self._call("cuLaunchKernelEx", prepared.config, prepared.function, prepared.params.address, 0)

    def synchronize(self) -> None:
        self._call("cuStreamSynchronize", self.stream)

    def time_launch(self, prepared: PreparedLaunch) -> float:
        """One launch bracketed by events on its stream; microseconds."""
        self._call("cuEventRecord", self.start_event, self.stream)
        self.launch(prepared)
        self._call("cuEventRecord", self.end_event, self.stream)
        self._call("cuEventSynchronize", self.end_event)
        # CUDA 13 headers spell it cuEventElapsedTime_v2; either binding measures the same.
        name = "cuEventElapsedTime" if hasattr(self.driver, "cuEventElapsedTime") else "cuEventElapsedTime_v2"
        return float(self._call(name, self.start_event, self.end_event)) * 1000.0

    def release(self, addresses: list, module) -> None:
        """Free a workload's memory and module. Failures are ignored: after an error the
        first failure is the one worth reporting, and recover() deals with the context."""
        for address in addresses:
            self.driver.cuMemFree(address)
        if module is not None:
            self.driver.cuModuleUnload(module)

    def recover(self) -> None:
        """After a failed workload: if the context is broken (a sticky error such as an
        illegal address), reset it so that the next workloads can run."""
        (status,) = self.driver.cuCtxSynchronize()
        if status == self.driver.CUresult.CUDA_SUCCESS:
            return
        # Reset destroys the context but keeps our reference (driver API docs); release that
        # reference, then retain a fresh context.
        self._call("cuDevicePrimaryCtxReset", self.device)
        self._call("cuDevicePrimaryCtxRelease", self.device)
        self._open_context()


# ----------------------------------------------------------------------------------------
# NVML (nvidia-ml-py)
# ----------------------------------------------------------------------------------------


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Nvml:
    """Clock and power readings of the measured GPU; a reading NVML refuses is None."""

    def __init__(self, pynvml, pci_bus_id: str, ordinal: int):
        self.nvml = pynvml
        pynvml.nvmlInit()
        self.handle = self._device(pci_bus_id, ordinal)

    def _device(self, pci_bus_id: str, ordinal: int):
        # CUDA and NVML may number GPUs differently (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER);
        # the PCI bus id names the same device in both.
        try:
            return self.nvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
        except self.nvml.NVMLError as e:
            print(f"measure.py: NVML has no device at {pci_bus_id} ({e}); using NVML index {ordinal}",
                  file=sys.stderr)
            return self.nvml.nvmlDeviceGetHandleByIndex(ordinal)

    def _read(self, name: str, *args):
        try:
            return getattr(self.nvml, name)(self.handle, *args)
        except self.nvml.NVMLError:
            return None

    def sample(self) -> tuple:
        """(SM clock MHz, memory clock MHz, power W)."""
        power_mw = self._read("nvmlDeviceGetPowerUsage")
        return (
            self._read("nvmlDeviceGetClockInfo", self.nvml.NVML_CLOCK_SM),
            self._read("nvmlDeviceGetClockInfo", self.nvml.NVML_CLOCK_MEM),
            None if power_mw is None else power_mw / 1000.0,
        )

    def describe(self) -> dict:
        limit_mw = self._read("nvmlDeviceGetEnforcedPowerLimit")
        return {
            "gpu": _text(self.nvml.nvmlDeviceGetName(self.handle)),
            "driver": _text(self.nvml.nvmlSystemGetDriverVersion()),
            "power_limit_w": None if limit_mw is None else limit_mw / 1000.0,
            "applications_sm_clock_mhz": self._read("nvmlDeviceGetApplicationsClock", self.nvml.NVML_CLOCK_SM),
            "applications_mem_clock_mhz": self._read("nvmlDeviceGetApplicationsClock", self.nvml.NVML_CLOCK_MEM),
        }

    def close(self) -> None:
        self.nvml.nvmlShutdown()


class Sampler:
    """Calls `sample()` every NVML_SAMPLE_PERIOD_S on a thread while the `with` block runs."""

    def __init__(self, sample: Callable[[], tuple]):
        self._sample = sample
        self.samples: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        # Sample first, then wait: a launch shorter than the period still gets a reading.
        while True:
            self.samples.append(self._sample())
            if self._stop.wait(NVML_SAMPLE_PERIOD_S):
                return

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# ----------------------------------------------------------------------------------------
# Measurement
# ----------------------------------------------------------------------------------------


@dataclass
class WorkloadResources:
    addresses: list = field(default_factory=list)
    module: object = None

    def track(self, address: int) -> int:
        self.addresses.append(address)
        return address


def measure_workload(gpu: Gpu, sample, plan_dir: Path, workload: dict, warmup: int, repeats: int,
                     dump: tuple = (), dump_dir: Optional[Path] = None) -> WorkloadOutcome:
    resources = WorkloadResources()
    try:
        return _measure(gpu, sample, Path(plan_dir), workload, warmup, repeats, resources, dump, dump_dir)
    finally:
        gpu.release(resources.addresses, resources.module)


def _measure(gpu, sample, plan_dir, workload, warmup, repeats, resources, dump=(), dump_dir=None) -> WorkloadOutcome:
    with annotate("loading the PTX"):
        resources.module = gpu.load_module(read_ptx(plan_dir, workload))
    functions = _load_functions(gpu, resources.module, workload["launches"])
    initial = {b["name"]: initial_contents(plan_dir, b) for b in workload["buffers"]}
    addresses = _allocate_buffers(gpu, resources, workload["buffers"], initial)
    prepared = [
        _prepare_launch(gpu, resources, i, launch, functions[launch["entry"]], addresses)
        for i, launch in enumerate(workload["launches"])
    ]
    _run_once(gpu, workload["launches"], prepared)
    check, mismatches = _run_checks(gpu, plan_dir, workload, addresses, initial)
    _dump_buffers(gpu, workload, addresses, dump, dump_dir)
    timings = [
        _time_launch(gpu, sample, i, launch, p, warmup, repeats)
        for i, (launch, p) in enumerate(zip(workload["launches"], prepared))
    ]
    return WorkloadOutcome(check, mismatches, timings)


def dump_line(workload: str, buffer: dict, raw: bytes) -> str:
    """One `--dump` line: a buffer's values after the correctness run, decoded by its dtype."""
    import numpy as np

    values = np.frombuffer(raw, dtype=BUFFER_DTYPES[buffer["dtype"]][0])
    if buffer["dtype"] == "bf16":
        values = decode_floats(raw, "bf16")
    shown = ", ".join(str(v) for v in values[:DUMP_VALUES].tolist())
    more = f", ... ({values.size} values)" if values.size > DUMP_VALUES else ""
    return f"dump: {workload} {buffer['name']} = [{shown}{more}]"


def _dump_buffers(gpu: Gpu, workload: dict, addresses: dict, prefixes: tuple,
                  dump_dir: Optional[Path] = None) -> None:
    for buffer in workload["buffers"]:
        if any(buffer["name"].startswith(p) for p in prefixes):
            raw = gpu.download(addresses[buffer["name"]], buffer["bytes"])
            print(dump_line(workload["workload"], buffer, raw), flush=True)
            if dump_dir is not None:
                save_dump(dump_dir, workload["workload"], buffer, raw)


def dump_file_name(workload: str, buffer_name: str) -> str:
    """`--dump-dir`'s file for a buffer: the workload's name with every character other than
    letters, digits, '.', '-' and '_' turned into '_', two underscores, the buffer's name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", workload)
    return f"{safe}__{buffer_name}.npy"


def save_dump(dump_dir: Path, workload: str, buffer: dict, raw: bytes) -> Path:
    """Write every value of a dumped buffer (the printed line shows the first DUMP_VALUES)."""
    import numpy as np

    dump_dir.mkdir(parents=True, exist_ok=True)
    values = np.frombuffer(raw, dtype=BUFFER_DTYPES[buffer["dtype"]][0])
    if buffer["dtype"] == "bf16":
        values = np.asarray(decode_floats(raw, "bf16"), dtype=np.float32)
    path = dump_dir / dump_file_name(workload, buffer["name"])
    np.save(path, values)
    return path


def _load_functions(gpu: Gpu, module, launches: list) -> dict:
    functions = {}
    for entry, shared in dynamic_shared_by_entry(launches).items():
        with annotate(f"entry {entry}"):
            functions[entry] = gpu.function(module, entry)
            if shared > DEFAULT_DYNAMIC_SHARED_LIMIT:
                gpu.allow_dynamic_shared(functions[entry], shared)
    return functions


def _allocate_buffers(gpu: Gpu, resources: WorkloadResources, buffers: list, initial: dict) -> dict:
    addresses = {}
    for buffer in buffers:
        name = buffer["name"]
        with annotate(f"buffer {name}"):
            addresses[name] = resources.track(gpu.alloc(buffer["bytes"]))
            if initial[name] is None:
                gpu.zero(addresses[name], buffer["bytes"])
            else:
                gpu.upload(addresses[name], initial[name])
    return addresses


def _prepare_launch(gpu: Gpu, resources, index: int, launch: dict, function, addresses: dict) -> PreparedLaunch:
    def place_tensor_map(map_bytes: bytes) -> int:
        # cuMemAlloc's alignment (at least 256 bytes) meets a CUtensorMap's 64.
        address = resources.track(gpu.alloc(TENSOR_MAP_BYTES))
        gpu.upload(address, map_bytes)
        return address

    with annotate(launch_label(index, launch)):
        blobs = launch_param_bytes(launch, addresses, gpu.encode_tensor_map, place_tensor_map)
        return gpu.prepare(function, launch, KernelParams(blobs))


def _run_once(gpu: Gpu, launches: list, prepared: list) -> None:
    for i, (launch, p) in enumerate(zip(launches, prepared)):
        with annotate(f"correctness run, {launch_label(i, launch)}"):
            gpu.launch(p)
    with annotate("correctness run, synchronising"):
        gpu.synchronize()


def _run_checks(gpu: Gpu, plan_dir: Path, workload: dict, addresses: dict, initial: dict) -> tuple:
    if not workload["checks"]:
        return "none", None
    buffers = {b["name"]: b for b in workload["buffers"]}
    total = 0
    for i, check in enumerate(workload["checks"]):
        name = check["buffer"]
        with annotate(f"check {i} (buffer {name})"):
            got = gpu.download(addresses[name], buffers[name]["bytes"])
        mismatches = check_mismatches(check, got, plan_dir, buffers, initial)
        if mismatches:
            print(f"{workload['workload']}: check {i} (buffer {name}): {mismatches} mismatches", file=sys.stderr)
        total += mismatches
    return ("pass" if total == 0 else "fail"), total


def _time_launch(gpu: Gpu, sample, index: int, launch: dict, prepared: PreparedLaunch,
                 warmup: int, repeats: int) -> LaunchTiming:
    with annotate(f"timing {launch_label(index, launch)}"):
        for _ in range(warmup):
            gpu.launch(prepared)
        gpu.synchronize()
        with Sampler(sample) as sampler:
            times = [gpu.time_launch(prepared) for _ in range(repeats)]
    return LaunchTiming(times, **summarize_samples(sampler.samples))


class ContextLost(Exception):
    """The context could not be reset after a failure (some sticky errors outlive a primary
    context reset): only a new process can go on, from workload `next_index` (0-based)."""

    def __init__(self, next_index: int):
        super().__init__(f"the CUDA context could not be recovered; going on from workload {next_index + 1} "
                         "in a new process")
        self.next_index = next_index


def measure_all(plan_dir: Path, workloads: list, gpu: Gpu, nvml, run_info: dict,
                warmup: int, repeats: int, writer, first_position: int = 1, dump: tuple = (),
                dump_dir: Optional[Path] = None) -> bool:
    """Measure every workload, writing its rows as it completes; True if all passed.
    Raises ContextLost when a failure leaves the GPU unusable to this process."""
    all_passed = True
    total = first_position - 1 + len(workloads)
    for position, workload in enumerate(workloads, first_position):
        recovered = True
        try:
            outcome = measure_workload(gpu, nvml.sample, plan_dir, workload, warmup, repeats, dump, dump_dir)
        except Exception as e:  # one broken workload must not end the run
            kind = "" if isinstance(e, CudaError) else f"{type(e).__name__}: "
            print(f"error: {workload['workload']}: {kind}{e}", file=sys.stderr, flush=True)
            outcome = WorkloadOutcome("error")
            recovered = _recover(gpu)
        writer(workload_rows(workload, outcome, run_info))
        print(progress_line(f"{position}/{total}", workload, outcome), file=sys.stderr, flush=True)
        all_passed &= outcome.check in ("pass", "none")
        if not recovered:
            raise ContextLost(position)
    return all_passed


def _recover(gpu: Gpu) -> bool:
    try:
        gpu.recover()
        return True
    except CudaError as e:
        print(f"error: resetting the context after the failure: {e}", file=sys.stderr)
        return False


def restart_command(argv: list, next_index: int) -> list:
    """This script's command line, resumed at workload `next_index` (0-based, of the selection)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--resume-at":
            skip = True
        elif not arg.startswith("--resume-at="):
            kept.append(arg)
    return [sys.executable, str(Path(__file__).resolve()), *kept, "--resume-at", str(next_index)]


def collect_run_info(gpu: Gpu, nvml, args) -> dict:
    return {
        **nvml.describe(),
        "cuda_driver": format_cuda_version(gpu.cuda_driver_version()),
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": args.device,
        "pci_bus_id": gpu.pci_bus_id(),
        "warmup": args.warmup,
        "repeats": args.repeats,
        "plan_dir": str(args.plan_dir),
    }


def parse_args(argv: Optional[list]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run the workloads of a `gpusim export` directory on an NVIDIA GPU and time them.")
    parser.add_argument("plan_dir", type=Path, help="the directory gpusim export wrote (holds plan.json)")
    parser.add_argument("--csv", type=Path, required=True, help="where to write the measurements")
    parser.add_argument("--warmup", type=int, default=3, help="untimed launches before the timed ones")
    parser.add_argument("--repeats", type=int, default=20, help="timed launches per launch of the plan")
    parser.add_argument("--only", nargs="+", action="extend", metavar="SUBSTRING",
                        help="measure only workloads whose name contains one of these")
    parser.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    parser.add_argument("--dump", nargs="+", action="extend", default=[], metavar="PREFIX",
                        help="after the correctness run, print the values of the buffers whose name "
                             "starts with one of these (a microbenchmark's timings, say)")
    parser.add_argument("--dump-dir", type=Path, metavar="DIR",
                        help="also write every value of each --dump buffer to DIR/<workload>__<buffer>.npy "
                             "(the printed line shows the first 64)")
    parser.add_argument("--no-install", action="store_true",
                        help="fail instead of pip-installing missing packages")
    # Set by the script itself when it restarts after losing its context: skip the
    # workloads already measured and append to the CSV.
    parser.add_argument("--resume-at", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.resume_at < 0:
        parser.error("--resume-at must be >= 0")
    return args


def main(argv: Optional[list] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        workloads = select_workloads(load_plan(args.plan_dir)["workloads"], args.only)
        if not workloads:
            raise PlanError(f"no workload matches --only {' '.join(args.only)}")
        ensure_packages(args.no_install)
    except (PlanError, SetupError) as e:
        print(f"measure.py: {e}", file=sys.stderr)
        return 2
    pynvml = importlib.import_module("pynvml")
    try:
        gpu = Gpu(import_driver(), args.device)
        nvml = Nvml(pynvml, gpu.pci_bus_id(), args.device)
    except (CudaError, pynvml.NVMLError) as e:
        print(f"measure.py: device {args.device}: {e}", file=sys.stderr)
        return 1
    resuming = args.resume_at > 0
    try:
        run_info = collect_run_info(gpu, nvml, args)
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        if not resuming:
            run_info_path(args.csv).write_text(json.dumps(run_info, indent=2) + "\n")
        print(f"measure.py: {run_info['gpu']}, driver {run_info['driver']} (CUDA {run_info['cuda_driver']}), "
              f"{len(workloads) - args.resume_at} of {len(workloads)} workloads", file=sys.stderr)
        with open(args.csv, "a" if resuming else "w", newline="") as out:
            table = csv.writer(out, lineterminator="\n")
            if not resuming:
                table.writerow(CSV_COLUMNS)

            def write(rows: list) -> None:
                table.writerows(rows)
                out.flush()

            all_passed = measure_all(args.plan_dir, workloads[args.resume_at:], gpu, nvml, run_info,
                                     args.warmup, args.repeats, write, first_position=args.resume_at + 1,
                                     dump=tuple(args.dump), dump_dir=args.dump_dir)
    except ContextLost as lost:
        print(f"measure.py: {lost}", file=sys.stderr, flush=True)
        nvml.close()
        if lost.next_index >= len(workloads):
            return 1
        # A new process gets a new context; it appends to the same CSV.
        return max(1, subprocess.call(restart_command(argv, lost.next_index)))
    finally:
        with contextlib.suppress(Exception):
            nvml.close()
    # A resumed run follows a workload that failed: the run as a whole did not pass.
    return 0 if all_passed and not resuming else 1


if __name__ == "__main__":
    sys.exit(main())
