"""What the judge's GPU-side clock (kgb.evaluate.kernel_clock) costs and reads, against the
events around each call (judge v7); prints a table. On a GPU host:

    python benchmarks/kernel_clock.py

For calls of a few sizes (a vector scale of 2^k floats, graph-timed when short): the median
under Protocol.CLEAN_L2 and Protocol.KERNELS, and the wall time of `measure` (what a timing
turn holds) under each; first, what the profiler's first start and stop cost in a fresh
process, which a spare judge pays before its request (kernel_clock.warm_up).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb.evaluate import kernel_clock, timing  # noqa: E402


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA GPU")
        return 1
    torch.empty(1, device="cuda")
    t0 = time.perf_counter()
    kernel_clock.warm_up()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    kernel_clock.warm_up()
    print(f"profiler start and stop around one kernel: first {first * 1e3:.1f} ms, then "
          f"{(time.perf_counter() - t0) * 1e3:.1f} ms")
    print("| elements | protocol | median us | repeats | mode | measure wall ms, median of 5 | note |")
    print("|---|---|---|---|---|---|---|")
    for log2 in (10, 16, 20, 22, 24, 26):
        x = torch.ones(1 << log2, device="cuda")
        for protocol in (timing.Protocol.CLEAN_L2, timing.Protocol.KERNELS):
            prepared, walls = None, []
            for _ in range(5):
                prepared = timing.prepare(lambda x=x: x.mul_(1.0), protocol=protocol)
                t0 = time.perf_counter()
                t = timing.measure(prepared)
                walls.append((time.perf_counter() - t0) * 1e3)
            print(f"| 2^{log2} | {protocol.value} | {t.median_us:.2f} | {t.repeats} | {t.mode} | "
                  f"{statistics.median(walls):.1f} | {t.note} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
