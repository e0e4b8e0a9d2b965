#!/usr/bin/env python3
"""Clock and power of a GPU under a sustained dense matrix load, as a time series.

    python3 tools/correlate/power_probe.py --out power.csv [--sizes 4096,8192] [--seconds 2.5]

For each size and input kind (random normal bf16, then zeros), runs cuBLAS bf16 products
(through PyTorch) back to back for `--seconds`, while a thread reads NVML every 10 ms: SM and
memory clocks, power, temperature and the clock-event (throttle) reasons. Writes one row per
sample to the CSV and prints one summary line per phase: achieved TFLOP/s, the median SM clock
and power over the phase's second half (the settled state), the reasons seen.

This is the reading the power model is checked against (docs/power.md): the clock the power
manager settles at under a tensor load, and how much the operand data moves the power. It
never changes the card's settings (clocks, power limit); it measures the card as found.

Needs PyTorch with CUDA and nvidia-ml-py (both are on the GPU machines this project uses).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import threading
import time

SAMPLE_PERIOD_S = 0.010

COLUMNS = ["phase", "t_s", "sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c", "reasons"]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="CSV of the samples")
    parser.add_argument("--sizes", default="4096,8192", help="square product sizes, comma-separated")
    parser.add_argument("--seconds", type=float, default=2.5, help="how long each phase runs")
    parser.add_argument("--idle-seconds", type=float, default=1.0, help="idle reading before the loads")
    return parser.parse_args(argv)


class Probe:
    def __init__(self, pynvml, handle):
        self.nvml = pynvml
        self.handle = handle
        self.rows: list = []
        self.phase = "idle"
        self.t0 = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self, name, *args):
        try:
            return getattr(self.nvml, name)(self.handle, *args)
        except Exception:
            return None

    def _reasons(self):
        value = self._read("nvmlDeviceGetCurrentClocksEventReasons")
        if value is None:
            value = self._read("nvmlDeviceGetCurrentClocksThrottleReasons")
        return value

    def _run(self):
        n = self.nvml
        while not self._stop.is_set():
            power_mw = self._read("nvmlDeviceGetPowerUsage")
            self.rows.append([
                self.phase,
                round(time.perf_counter() - self.t0, 4),
                self._read("nvmlDeviceGetClockInfo", n.NVML_CLOCK_SM),
                self._read("nvmlDeviceGetClockInfo", n.NVML_CLOCK_MEM),
                None if power_mw is None else power_mw / 1000.0,
                self._read("nvmlDeviceGetTemperature", n.NVML_TEMPERATURE_GPU),
                self._reasons(),
            ])
            self._stop.wait(SAMPLE_PERIOD_S)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()


def settled(rows, phase, column):
    """Median of `column` over the second half of a phase's samples."""
    values = [r[column] for r in rows if r[0] == phase and r[column] is not None]
    values = values[len(values) // 2:]
    return statistics.median(values) if values else None


def run_phase(torch, probe, phase, a, b, seconds):
    probe.phase = phase
    n = a.shape[0]
    c = torch.empty((n, n), dtype=a.dtype, device=a.device)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    count = 0
    wall0 = time.perf_counter()
    start_event.record()
    while time.perf_counter() - wall0 < seconds:
        for _ in range(8):
            torch.matmul(a, b, out=c)
        count += 8
        torch.cuda.synchronize()
    end_event.record()
    torch.cuda.synchronize()
    elapsed_s = start_event.elapsed_time(end_event) / 1000.0
    return 2.0 * n ** 3 * count / elapsed_s / 1e12


def main(argv=None):
    args = parse_args(argv)
    import pynvml
    import torch

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    limit = pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0
    print(f"power_probe: {torch.cuda.get_device_name()}, enforced power limit {limit:.0f} W", flush=True)
    probe = Probe(pynvml, handle)
    probe.start()
    time.sleep(args.idle_seconds)
    summaries = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            gen = torch.Generator(device="cuda").manual_seed(size)
            a = torch.randn((size, size), device="cuda", dtype=torch.bfloat16, generator=gen)
            b = torch.randn((size, size), device="cuda", dtype=torch.bfloat16, generator=gen)
            for kind, (x, y) in (("randn", (a, b)), ("zeros", (torch.zeros_like(a), torch.zeros_like(b)))):
                phase = f"bf16_{size}_{kind}"
                tflops = run_phase(torch, probe, phase, x, y, args.seconds)
                summaries.append((phase, tflops))
            del a, b
            torch.cuda.empty_cache()
        probe.phase = "cooldown"
        time.sleep(0.3)
    finally:
        probe.stop()
    with open(args.out, "w", newline="") as out:
        table = csv.writer(out, lineterminator="\n")
        table.writerow(COLUMNS)
        table.writerows(probe.rows)
    idle_power = settled(probe.rows, "idle", 4)
    idle_clock = settled(probe.rows, "idle", 2)
    print(f"idle: SM {idle_clock} MHz, {idle_power} W", flush=True)
    for phase, tflops in summaries:
        reasons = sorted({r[6] for r in probe.rows if r[0] == phase and r[6] is not None})
        print(f"{phase}: {tflops:.1f} TFLOP/s, settled SM {settled(probe.rows, phase, 2)} MHz, "
              f"mem {settled(probe.rows, phase, 3)} MHz, {settled(probe.rows, phase, 4)} W, "
              f"{settled(probe.rows, phase, 5)} C, reasons {[hex(r) for r in reasons]}", flush=True)
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
