"""The GPUs of this host that evaluations share: each evaluation takes the least busy one,
so that a job's concurrent trials spread over every visible GPU, with one timing slot per
GPU (the judge's timing lock is per GPU)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager


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
    """Evaluations of this process share their GPUs' memory. One that ran out of it among
    the others is not the candidate's failure until it runs out alone: it runs again once no
    other evaluation is in flight, and none starts until it is done."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._in_flight = 0
        self._alone = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._alone)
            self._in_flight += 1
        yield from self._leaving(alone=False)

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._alone)
            self._alone = True
            self._cond.wait_for(lambda: self._in_flight == 0)
            self._in_flight += 1
        yield from self._leaving(alone=True)

    def _leaving(self, alone: bool) -> Iterator[None]:
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._alone = self._alone and not alone
                self._cond.notify_all()


memory = MemoryGate()


def out_of_memory(text: str) -> bool:
    """Whether a judge's or candidate's log says the GPU ran out of memory."""
    return "CUDA out of memory" in text or "OutOfMemoryError" in text
