"""One timing at a time per GPU, whichever judge process holds the turn.

Checks, compiles, transfers and comparisons of many evaluations overlap; only the
measurements themselves (the candidate's own, the judge's replay of it, the baseline) take
the GPU's turn, each for as long as it measures. The turn is a lock file per GPU
(kgb.evaluate._timing_lock names it), so judges forked by different engines, or by
different jobs of one multirun, share it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kgb.evaluate.phases import Phases

IDLE_S = 1.0  # a GPU left without timings this long may have lowered its clocks


class TimingLock:
    def __init__(self, path: str | None, phase: Phases):
        self.path, self.phase = path, phase

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if not self.path:
            yield
            return
        if not os.path.exists(self.path):
            with open(self.path, "a"):
                os.utime(self.path, (0, 0))  # never timed on: the first turn spins the GPU up
        with open(self.path, "a") as f:
            with self.phase("waiting for the GPU"):
                fcntl.flock(f, fcntl.LOCK_EX)
            try:
                if time.time() - os.fstat(f.fileno()).st_mtime > IDLE_S:
                    with self.phase("spin-up"):
                        spin_up()
                yield
            finally:
                os.utime(self.path)  # when the GPU last timed: the next turn skips the spin-up
                fcntl.flock(f, fcntl.LOCK_UN)


def spin_up(seconds: float = 0.2) -> None:
    """Keep the GPU busy for a moment before timing: an idle GPU runs at low clocks, and the
    first timings after a pause came out slower (and chose eager over graph timing)."""
    import torch

    x = torch.randn(2048, 2048, device="cuda")
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for _ in range(10):
            x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
