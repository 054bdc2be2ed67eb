"""CUDA starts held back while a judge times a first call that must be alone (judge v31).

A timing turn keeps every judge's work sections off the GPU, not the processes that start
CUDA outside them: a judge's candidate process, and a spare judge's own context, start while
turns measure, since a turn would wait seconds for a start on a loaded host. A median shrugs
off what a start does beside a few of its repetitions; one call cannot (kgb.evaluate.first_call).
On session 53's H100s the first calls with another process starting CUDA beside them reached
1.30 times their repetitions' median (p99) where the others stopped at 1.14, and one case's
first call (cublasZdotc_v2's bench-64m, 0.67 ms) took 1.52-2.08 times it in 3 of the 7 times it
was timed, a start beside it each time.

So every such start holds this gate shared (`starting`), one file per GPU beside its timing
lock, from before its process forks until its CUDA context is up; and an evaluation run again
because a case was timed by its first call (kgb.evaluate.evaluate) times each replay holding it
whole (`alone`): it waits for the starts under way to end, at most QUIET_WAIT_S, and no new one
begins until its measurement is done. Only those runs wait: a first job's turns found a start
under way beside a third of their measurements (session 53), and waiting in each would hold
every judge's GPU work for seconds a job.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

# beside the GPU's timing lock (kgb.evaluate.timing_lock)
GATE_SUFFIX = ".starts"
# The longest a replay waits for the starts under way: a start took a median 0.48 s on a loaded
# H100 (session 53), 1.4 s at a job's beginning.
QUIET_WAIT_S = 3.0
POLL_S = 0.002


def gate_of(timing_lock: str | None) -> str | None:
    """The gate of the GPU whose timing lock is `timing_lock` (None on the CPU)."""
    return timing_lock + GATE_SUFFIX if timing_lock else None


@contextmanager
def starting(gate: str | None) -> Iterator[None]:
    """Around a process's CUDA start: shared with every other start, and waiting while a replay
    holds the gate. Taken before a candidate process forks: its child closes what it inherits
    before it touches CUDA, and the lock stays with this process's descriptor."""
    if gate is None:
        yield
        return
    fd = os.open(gate, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


@contextmanager
def alone(gate: str | None, wait_s: float = QUIET_WAIT_S) -> Iterator[tuple[bool, float]]:
    """Hold the gate whole: (whether no start was under way, seconds waited). After `wait_s`
    it goes on without it, and says so: a measurement is never stopped for a start."""
    if gate is None:
        yield False, 0.0
        return
    fd = os.open(gate, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    began = time.monotonic()
    try:
        held = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() - began >= wait_s:
                    break
                time.sleep(POLL_S)
        yield held, time.monotonic() - began
    finally:
        os.close(fd)
