"""One timing at a time per GPU, whichever judge process holds the turn, on a GPU nobody
else is using meanwhile.

Draws, compiles, transfers and checks of many evaluations overlap; only the measurements
themselves (the candidate's own, the judge's replay of it, the baseline) take the GPU's
turn, each for as long as it measures. The judges' other GPU work (a case's reference,
the candidate's checked call, the comparison) runs in `work()` sections, which a turn
waits to drain and which wait while a turn is held: another judge's check running beside
a timing slowed it by up to 12x on the H200 (session 15: grouped_topk 13 us alone, 77 us
in a sweep). The turn is a lock file per GPU (kgb.evaluate._timing_lock names it) and the
work sections share a second one beside it, so judges forked by different engines, or by
different jobs of one multirun, share both.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kgb.evaluate.phases import Phases

WORK_SUFFIX = ".work"  # the work sections' lock file: the turn's path with this added
IDLE_S = 1.0  # a GPU left without timings this long may have lowered its clocks
DRAIN_LIMIT_S = 10.0  # how long a turn waits for running work sections before timing beside them


def _flock_within(f, operation: int, limit_s: float) -> bool:
    """flock, giving up after limit_s; whether it was granted."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            fcntl.flock(f, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


class TimingLock:
    def __init__(self, path: str | None, phase: Phases):
        self.path, self.phase = path, phase
        self.crowded_turns = 0  # turns that timed while another judge's work section ran on

    def _create(self) -> None:
        if not os.path.exists(self.path):
            with open(self.path, "a"):
                os.utime(self.path, (0, 0))  # never timed on: the first turn spins the GPU up

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if not self.path:
            yield
            return
        self._create()
        with open(self.path, "a") as f, open(self.path + WORK_SUFFIX, "a") as work:
            with self.phase("waiting for the GPU"):
                fcntl.flock(f, fcntl.LOCK_EX)
                # Held, the turn keeps new work sections out (they pass through it, below);
                # this waits for those already running to end, for a bounded time: a
                # candidate hanging in its check must not stop every timing of the GPU.
                drained = _flock_within(work, fcntl.LOCK_EX, DRAIN_LIMIT_S)
            if not drained:
                self.crowded_turns += 1
            try:
                if time.time() - os.fstat(f.fileno()).st_mtime > IDLE_S:
                    with self.phase("spin-up"):
                        spin_up()
                yield
            finally:
                os.utime(self.path)  # when the GPU last timed: the next turn skips the spin-up
                if drained:
                    fcntl.flock(work, fcntl.LOCK_UN)
                fcntl.flock(f, fcntl.LOCK_UN)

    @contextmanager
    def work(self) -> Iterator[None]:
        """A section of GPU work that is not a measurement: any number run at once, none
        while a turn is held. Never take the turn inside one (the turn would wait for it)."""
        if not self.path:
            yield
            return
        self._create()
        with open(self.path, "a") as turnstile, open(self.path + WORK_SUFFIX, "a") as work:
            with self.phase("waiting for the GPU"):
                # Shared on the turn's own file: granted unless a turn is held, and a turn
                # that waits for the running sections holds it, so sections cannot keep
                # starting and starve it.
                fcntl.flock(turnstile, fcntl.LOCK_SH)
                fcntl.flock(work, fcntl.LOCK_SH)
                fcntl.flock(turnstile, fcntl.LOCK_UN)
            try:
                yield
            finally:
                fcntl.flock(work, fcntl.LOCK_UN)


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
