"""The GPU's quiet gate: what other processes do to the GPU outside work sections, held back
while a judge times a first call that must be alone (judge v31; its door, v32).

A timing turn keeps every judge's work sections off the GPU, not what processes do outside
them: a judge's candidate process and a spare judge start CUDA (a turn would wait seconds for a
start on a loaded host), and judges give cached memory back after each case and turn. A median
shrugs off what those do beside a few repetitions; one call cannot (kgb.evaluate.first_call).
On session 53's H100s the first calls with another process starting CUDA beside them reached
1.30 times their repetitions' median (p99) where the others stopped at 1.14, and one case's
first call (cublasZdotc_v2's bench-64m, 0.67 ms over two 1 GB vectors) took 1.52-2.08 times it
in 3 of the 7 times it was timed, a start beside it each time. On session 54's H100
(benchmarks/context_starts.py --first-call) a first call of that size, alone, took at most
1.003 times its repetitions; beside four processes starting and ending CUDA, up to 3.8 times
(5 of 15 over 1.25); beside four giving 1 GB back over and over, up to 3.8 times (9 of 15),
while calls of 41 us did not move.

So each of those holds this gate shared (`changing`), one file per GPU beside its timing lock:
a CUDA start from before its process forks until its context is up, a release of cached memory
while it runs, a candidate process's end while the judge waits for it. An evaluation run again
because a case was timed by its first call (kgb.evaluate.evaluate) measures each replay holding
the gate whole (`alone`): it waits for what is under way, at most QUIET_WAIT_S, and nothing new
begins until its measurement is done. Only those runs wait: a first job's turns found a start
under way beside a third of their measurements (session 53), and waiting in each would hold every
judge's GPU work for seconds a job.

A replay waiting for the gate shuts a door first (judge v32): a second file that every `changing`
passes through, shared and only for a moment, before it takes the gate. With the door shut, no
new change begins, so the gate comes free once those under way end. Without it, changes that
overlap keep the gate held shared for good: on session 55's H100, beside four processes giving
memory back over and over, every gated measurement waited its whole 3 s and went on unquiet, and
6 of 12 first calls of the 0.7 ms call took over 1.25 times their repetitions.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

# beside the GPU's timing lock (kgb.evaluate.timing_lock); the door beside the gate
GATE_SUFFIX = ".quiet"
DOOR_SUFFIX = ".door"
# The longest a replay waits for what is under way: a start took a median 0.45-0.48 s on a
# loaded H100 (sessions 53-54), 1.4 s at a job's beginning.
QUIET_WAIT_S = 3.0
POLL_S = 0.002


def gate_of(timing_lock: str | None) -> str | None:
    """The gate of the GPU whose timing lock is `timing_lock` (None on the CPU)."""
    return timing_lock + GATE_SUFFIX if timing_lock else None


@contextmanager
def changing(gate: str | None) -> Iterator[None]:
    """Around a CUDA start, a release of memory or a process's end outside a work section:
    shared with every other, and waiting while a replay holds the door or the gate. A candidate
    process's start takes it before the fork: the child closes what it inherits before it
    touches CUDA, and the lock stays with this process's descriptor."""
    if gate is None:
        yield
        return
    door, fd = _open(gate + DOOR_SUFFIX), _open(gate)
    try:
        # through the door, shared and for a moment, while a replay waiting has it shut; the
        # gate is taken before the door is let go of, so a replay that shuts it waits for this
        fcntl.flock(door, fcntl.LOCK_SH)
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.close(door)
        door = -1
        yield
    finally:
        if door >= 0:
            os.close(door)
        os.close(fd)  # the lock goes with the descriptor


@contextmanager
def alone(gate: str | None, wait_s: float = QUIET_WAIT_S) -> Iterator[tuple[bool, float]]:
    """Hold the door and the gate whole: (whether nothing was under way, seconds waited). After
    `wait_s` it goes on without them, and says so: a measurement is never stopped for a start."""
    if gate is None:
        yield False, 0.0
        return
    began = time.monotonic()
    door, fd = _open(gate + DOOR_SUFFIX), _open(gate)
    try:
        quiet = _take(door, began + wait_s) and _take(fd, began + wait_s)
        yield quiet, time.monotonic() - began
    finally:
        os.close(fd)
        os.close(door)


def _open(path: str) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _take(fd: int, until: float) -> bool:
    """Lock `fd` whole, polling until the monotonic time `until`: whether it was taken."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= until:
                return False
            time.sleep(POLL_S)
