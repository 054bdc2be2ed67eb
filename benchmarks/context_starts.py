"""Whether CUDA contexts starting and ending in other processes slow a timing turn; prints a table.

    python benchmarks/context_starts.py [--measures 30] [--starters 0,1,4]

In a sweep, judges and their candidate processes start CUDA all the time (session 23's call 6:
219 starts of about 4 s each), and those starts take no work section, so timing turns run
beside them. In that sweep's trace the turns whose measurement overlapped a start took a
median 0.153 s, the others 0.05 s. This checks the cause on its own: one process times a
fixed call with the judge's `kgb.evaluate.timing.measure` again and again, while N other
processes each start a CUDA context in a forked child (from a parent that imported torch,
as the engine does), run one op and exit, over and over. Per N: how long a measurement
held the GPU (its wall time), the latency it reported, and how long a child took to start.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402  imported before any fork, CUDA untouched here, as in the engine

CALLS = {"scale 2^16 (graph)": 1 << 16, "scale 2^24 (eager)": 1 << 24}


def _starter(stop, starts) -> None:
    """Forks children that start CUDA, run one op and exit, until told to stop; sends how
    long each took (a pipe, not a queue: a queue's feeder thread would make every fork here
    the fork of a threaded process)."""
    while not stop.is_set():
        began = time.monotonic()
        pid = os.fork()
        if pid == 0:
            torch.empty(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            os._exit(0)
        os.waitpid(pid, 0)
        starts.send(time.monotonic() - began)
    starts.send(None)


def _timer(conn) -> None:
    """Times each call whenever asked: (wall s of each measure, median us of each)."""
    from kgb.evaluate.kernel_clock import warm_up
    from kgb.evaluate.timing import measure, prepare

    tensors = {name: (torch.randn(n, device="cuda"), torch.empty(n, device="cuda")) for name, n in CALLS.items()}
    warm_up()
    while (count := conn.recv()) is not None:
        out = {}
        for name, (x, y) in tensors.items():
            walls, medians = [], []
            for _ in range(count):
                prepared = prepare(lambda x=x, y=y: torch.mul(x, 2.0, out=y))
                began = time.monotonic()
                timing = measure(prepared, repeats=100)
                walls.append(time.monotonic() - began)
                medians.append(timing.median_us)
            out[name] = (walls, medians)
        conn.send(out)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measures", type=int, default=30)
    parser.add_argument("--starters", default="0,1,4")
    args = parser.parse_args()
    fork = multiprocessing.get_context("fork")
    ours, theirs = fork.Pipe()
    timer = fork.Process(target=_timer, args=(theirs,), daemon=True)
    timer.start()
    print("| other processes starting CUDA | call | measure wall median / p90 (ms) | latency median (us) "
          "| starts during it, median (s) |")
    print("|---|---|---|---|---|")
    for n in (int(v) for v in args.starters.split(",")):
        stop = fork.Event()
        pipes = [fork.Pipe(duplex=False) for _ in range(n)]
        starters = [fork.Process(target=_starter, args=(stop, sending), daemon=True) for _, sending in pipes]
        for s in starters:
            s.start()
        time.sleep(2.0 if n else 0.0)  # the starts under way before the first measure
        ours.send(args.measures)
        result = ours.recv()
        stop.set()
        took = []
        for receiving, _ in pipes:
            while (seconds := receiving.recv()) is not None:
                took.append(seconds)
        for s in starters:
            s.join(timeout=30)
        for name, (walls, medians) in result.items():
            start_s = f"{statistics.median(took):.2f} ({len(took)})" if took else "-"
            print(f"| {n} | {name} | {1000 * statistics.median(walls):.1f} / {1000 * _quantile(walls, 0.9):.1f} "
                  f"| {statistics.median(medians):.2f} | {start_s} |", flush=True)
    ours.send(None)
    timer.join(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
