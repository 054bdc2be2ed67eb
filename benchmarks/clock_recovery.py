"""How fast a short GEMM runs right after the GPU was busy, against a quiet GPU; prints a table.

    python benchmarks/clock_recovery.py [--load-s 5] [--cycles 3] [--after-s 1.5]

On the H200 (session 37) a candidate's timing came out 15-25% slower now and then, a whole
measurement at once, while its baseline, timed right after it in the same turn of the GPU,
did not. A timing turn starts as soon as the other judges' work sections have drained; if
their load had lowered the GPU's clocks (power cap, heat), the turn's first measurement, the
candidate's, would run before they came back up. This measures that: a quiet reference
(the GPU idle, then spun up), then each cycle loads the GPU with large GEMMs for --load-s,
stops, and times a probe GEMM back to back for --after-s, reading the SM clock (NVML) after
each probe. The table gives, by time since the load stopped, the probe's median time over
the quiet one and the SM clock. A second table times a long GEMM as a turn's measurement
does (the L2 flushed by reading before each of 100 repetitions), from a GPU at rest: whether
its own repetitions bring the power cap down on it, which would split its samples in two
and let the median fall on either side. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb.evaluate.nvml import Clocks, Reading  # noqa: E402
from kgb.evaluate.timing import L2Flush  # noqa: E402
from kgb.evaluate.timing_lock import spin_up  # noqa: E402

WINDOWS_MS = (0, 10, 25, 50, 100, 200, 400, 800, 1600)
REPETITION_GROUPS = ((1, 5), (6, 20), (21, 50), (51, 100))


def timed(call, clocks: Clocks, events: tuple[torch.cuda.Event, torch.cuda.Event]) -> tuple[float, Reading | None]:
    """One call's microseconds between two events, and the clocks read right after it."""
    start, end = events
    start.record()
    call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0, clocks.read()


def repetitions(call, clocks: Clocks, n: int = 100) -> list[tuple[float, int | None]]:
    """(us, SM MHz after it) of n calls, each after an L2 flush that reads, as a turn times them."""
    flush = L2Flush(reading=True)
    events = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(n):
        flush()
        us, reading = timed(call, clocks, events)
        out.append((us, reading.sm_mhz if reading else None))
    return out


def probe_times(probe, seconds: float, clocks: Clocks) -> list[tuple[float, float, int | None, tuple]]:
    """(ms since the start, probe us, SM MHz, reasons) for back-to-back probes over `seconds`."""
    events = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    began = time.perf_counter()
    while (now := time.perf_counter() - began) < seconds:
        us, reading = timed(probe, clocks, events)
        out.append((now * 1000.0, us, reading.sm_mhz if reading else None, reading.reasons if reading else ()))
    return out


def load(seconds: float, big: torch.Tensor, streams: list[torch.cuda.Stream]) -> None:
    """Large GEMMs on every stream for `seconds`."""
    ended = time.perf_counter() + seconds
    while time.perf_counter() < ended:
        for s in streams:
            with torch.cuda.stream(s):
                for _ in range(4):
                    big @ big
        torch.cuda.synchronize()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--load-s", type=float, default=5.0)
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--after-s", type=float, default=1.5)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU visible to torch here: this benchmark measures one", file=sys.stderr)
        return 2
    clocks = Clocks.of_cuda_device()
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, generator=gen)
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16, generator=gen)
    streams = [torch.cuda.Stream() for _ in range(2)]

    def probe():
        return a @ a

    for _ in range(5):
        probe()
    time.sleep(2.0)
    spin_up(0.3)
    # the quiet reference from the last half second of 1.5 s of probes: in session 37 one taken
    # right after the spin-up was 13% slower than the probes a second after a load
    quiet = [p for p in probe_times(probe, 1.5, clocks) if p[0] >= 1000.0]
    quiet_us = statistics.median(t for _, t, _, _ in quiet)
    quiet_mhz = statistics.median(m for _, _, m, _ in quiet if m is not None) if clocks.available else None
    print(f"device: {torch.cuda.get_device_name()}; NVML: {'yes' if clocks.available else 'no'}")
    print(f"quiet probe (4096^3 bf16 GEMM): {quiet_us:.1f} us at {quiet_mhz} MHz\n")
    rows = []
    for cycle in range(args.cycles):
        load(args.load_s - 0.2, big, streams)
        during = clocks.read()  # near the end of the load
        load(0.2, big, streams)
        after = probe_times(probe, args.after_s, clocks)
        rows.append((cycle, during, after))
    print("| since the load stopped (ms) | probes | probe / quiet (median) | slowest | SM MHz (median) | why held down |")
    print("|---|---|---|---|---|---|")
    for lo, hi in zip(WINDOWS_MS, WINDOWS_MS[1:], strict=False):
        got = [p for _, _, after in rows for p in after if lo <= p[0] < hi]
        if not got:
            continue
        ratios = [t / quiet_us for _, t, _, _ in got]
        mhz = [m for _, _, m, _ in got if m is not None]
        reasons = sorted({r for *_, rs in got for r in rs})
        print(f"| {lo}-{hi} | {len(got)} | {statistics.median(ratios):.3f} | {max(ratios):.3f} | "
              f"{statistics.median(mhz) if mhz else '-'} | {', '.join(reasons) or '-'} |")
    print("\n| a long GEMM's repetitions, from rest (8192^3 bf16) | repetitions | time / the first repetition (median) "
          "| SM MHz (median) |")
    print("|---|---|---|---|")
    timed = []
    for _ in range(args.cycles):
        # a drain's rest (their median 0.15 s on the H200): a turn's measurements started at
        # 120-650 W there (session 37); a second of idling would lower the clocks instead
        time.sleep(0.3)
        timed.append(repetitions(lambda: big @ big, clocks))
    for lo, hi in REPETITION_GROUPS:
        ratios = [t / reps[0][0] for reps in timed for t, _ in reps[lo - 1:hi]]
        mhz = [m for reps in timed for _, m in reps[lo - 1:hi] if m is not None]
        print(f"| {lo}-{hi} | {hi - lo + 1} | {statistics.median(ratios):.3f} | {statistics.median(mhz) if mhz else '-'} |")
    medians = [statistics.median(t for t, _ in reps) for reps in timed]
    print("each cycle's median: " + ", ".join(f"{m:.1f} us" for m in medians))
    for cycle, during, _ in rows:
        if during:
            print(f"cycle {cycle}, the load's last moments: {during.sm_mhz} MHz of {during.max_sm_mhz}, "
                  f"{during.power_w:.0f} W, {during.temperature_c} C, held down by: {', '.join(during.reasons) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
