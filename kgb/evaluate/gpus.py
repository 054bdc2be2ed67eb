"""The GPUs of this host that evaluations share: each evaluation takes the least busy one,
so that a job's concurrent trials spread over every visible GPU, with one timing slot per
GPU (the judge's timing lock is per GPU)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kgb.evaluate.timing_lock import trace


def visible_gpus() -> list[str]:
    """This process's GPUs, as CUDA_VISIBLE_DEVICES names them (or their ordinals)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()]
    try:
        import torch

        count = torch.cuda.device_count()  # counts through NVML where it can: no CUDA context here
    except Exception:  # noqa: BLE001 - a broken driver means no GPU to share
        count = 0
    return [str(i) for i in range(count)]


def memory_mib() -> list[int]:
    """Each GPU's memory in MiB as the NVIDIA driver's `nvidia-smi` reports it; empty where
    it cannot say (no driver, no tool). Asked of the driver's tool, not of CUDA: the harness
    starts no CUDA context of its own."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [int(v) for v in out.split() if v.isdigit()]


class GpuSlots:
    """Leases GPUs to evaluations, the one with the fewest evaluations in flight first."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        self.busy = dict.fromkeys(ids, 0)
        self._lock = threading.Lock()

    @contextmanager
    def lease(self) -> Iterator[str]:
        with self._lock:
            gpu = min(self.ids, key=lambda i: self.busy[i])
            self.busy[gpu] += 1
        try:
            yield gpu
        finally:
            with self._lock:
                self.busy[gpu] -= 1


_slots: GpuSlots | None = None
_slots_lock = threading.Lock()


def slots() -> GpuSlots:
    """This process's GPU slots, found on first use."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = GpuSlots(visible_gpus())
        return _slots


class MemoryGate:
    """How many of this process's evaluations share their GPUs' memory at once. At first as
    many as the callers run; when one runs out of memory among others, the gate lets in a
    quarter fewer than were in flight with it (one fewer at least) and that evaluation runs
    again under the new ceiling, as often as it runs out among others. One that runs out with
    no other in flight keeps its verdict: then it is the candidate's own failure. Evaluations
    that end without running out raise the ceiling again, one for each quarter of a ceiling's
    worth of them, up to the most that were ever in flight, so a sweep returns to full
    concurrency soon after its memory-hungry operators are past.

    (Until session 21 such an evaluation ran again only once no other was in flight, and none
    started meanwhile: on the H200 a sweep of 12 in flight judged 95 operators in 380 s where
    the same sweep had judged all 210 in 520 s. Until session 25 the gate halved its ceiling
    and raised it by one per ceiling's worth of evaluations: at 16 in flight the first seven
    of them ran out together, and the sweep then ran below 16 for some 90 evaluations, 2412 s
    of waits and reruns outside the judge against 219 s at 12.)"""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._in_flight = 0
        self._ceiling: int | None = None  # None: no ceiling of the gate's own
        self._fitted = 0  # evaluations that ended without running out, since the ceiling last moved
        self._most = 0  # the most evaluations ever in flight at once: the ceiling never rises past it
        self._seats: set[Seat] = set()
        self._again = 0  # evaluations waiting to run again: they go before new ones

    @property
    def ceiling(self) -> int | None:
        return self._ceiling

    @property
    def lowered(self) -> bool:
        """Whether the ceiling holds evaluations below the most that were ever in flight: from
        running out until as many have fitted again."""
        return self._ceiling is not None and self._ceiling < self._most

    @contextmanager
    def seat(self, again: bool = False) -> Iterator[Seat]:
        """A place among the evaluations in flight, once the ceiling allows; the caller marks
        `ran_out` on it before leaving when the evaluation ran out of GPU memory. `again`: for
        an evaluation that ran out before; new ones wait until it has its place."""
        with self._cond:
            self._again += again
            self._cond.wait_for(lambda: (self._ceiling is None or self._in_flight < self._ceiling)
                                and (again or not self._again))
            self._again -= again
            self._in_flight += 1
            self._most = max(self._most, self._in_flight)
            seat = Seat(among=self._in_flight)
            for other in self._seats:
                other.among = max(other.among, self._in_flight)
            self._seats.add(seat)
        try:
            yield seat
        finally:
            with self._cond:
                self._in_flight -= 1
                self._seats.discard(seat)
                was = self._ceiling
                if seat.ran_out and seat.among > 1:
                    self._ceiling = max(1, min(self._ceiling or seat.among, seat.among - _quarter(seat.among)))
                    self._fitted = 0
                elif not seat.ran_out and self._ceiling is not None and self._ceiling < self._most:
                    self._fitted += 1
                    if self._fitted >= _quarter(self._ceiling):
                        self._ceiling, self._fitted = self._ceiling + 1, 0
                if self._ceiling != was:  # for benchmarks/gpu_trace.py, where a trace is kept
                    now = time.monotonic()
                    trace("gate", now, now, now, ceiling=self._ceiling, in_flight=self._in_flight)
                self._cond.notify_all()


def _quarter(n: int) -> int:
    """The gate's step: a quarter of `n`, one at least."""
    return max(1, n // 4)


@dataclass(eq=False)
class Seat:
    """One evaluation's place at the gate: the most evaluations in flight while it was, itself
    included, and whether it ran out of GPU memory."""

    among: int
    ran_out: bool = False


memory = MemoryGate()


# How the GPU's running out of memory reads, wherever it happened: PyTorch's allocator, a
# CUDA call's error (Triton's launcher, a library), cuBLAS's own allocation. On the H200
# (session 25) a verdict that said so only in its message, or only as Triton's launcher put
# it, was kept as the candidate's runtime error: four operators of a sweep judged wrong.
OUT_OF_MEMORY = ("CUDA out of memory", "OutOfMemoryError", "CUDA error: out of memory",
                 "[CUDA]: out of memory", "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY",
                 "CUBLAS_STATUS_ALLOC_FAILED")


def out_of_memory(text: str) -> bool:
    """Whether a verdict's message or log says the GPU ran out of memory."""
    return any(sign in text for sign in OUT_OF_MEMORY)
