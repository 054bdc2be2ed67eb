"""Out-of-bounds memory access in Triton's CPU interpreter, caught as on a GPU.

The interpreter loads and stores through raw host addresses: a kernel that reads past the
end of a tensor gets whatever lies there and is judged on its answer, where a GPU faults
with an illegal address or reads another buffer. Found on an H200: the triangular-solve
solutions read A past its last row for trans = T, lower, and passed every case on the CPU.

Every active lane of a load, store or atomic must address bytes inside a storage the
kernel was launched with, inside one of the judged call's inputs (a cuBLAS batched
routine's pointer arrays point into them), or inside a tensor made during the call (a
kernel may reach its own scratch through a table of pointers). Applied in the candidate
process (chip=cpu).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

# (kernel name, sorted storage starts, their ends) of the launch being interpreted
_launch: tuple[str, np.ndarray, np.ndarray] | None = None
_call_storages: list[torch.UntypedStorage] = []  # the judged call's inputs and what it made
_in_call = False
_interpreting = False  # set once the interpreter is patched: on a GPU the hardware checks


class OutOfBounds(RuntimeError):
    """A kernel addressed memory outside every tensor it could rightly reach."""


@contextmanager
def call_inputs(storages: list[torch.UntypedStorage]) -> Iterator[None]:
    """Let the kernels of one judged call also reach these storages."""
    global _call_storages, _in_call
    _call_storages, _in_call = list(storages), True
    try:
        yield
    finally:
        _call_storages, _in_call = [], False


def made(value: Any) -> None:
    """Let the rest of the call's kernels reach the tensors an op just made (called by the
    op audit, kgb.evaluate.integrity, which sees every op). Held until the call ends, so
    their memory is not reused by another tensor meanwhile."""
    if _in_call and _interpreting:
        _call_storages.extend(_storages(value))


def _storages(value: Any) -> Iterator[torch.UntypedStorage]:
    if isinstance(value, torch.Tensor):
        yield value.untyped_storage()
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _storages(v)
    elif hasattr(value, "base") and isinstance(getattr(value, "base", None), torch.Tensor):  # TensorDescriptor
        yield value.base.untyped_storage()


def _ranges(storages: list[torch.UntypedStorage]) -> tuple[np.ndarray, np.ndarray]:
    spans = sorted({(s.data_ptr(), s.data_ptr() + s.nbytes()) for s in storages if s.nbytes() > 0})
    starts = np.array([a for a, _ in spans], dtype=np.uint64)
    ends = np.array([b for _, b in spans], dtype=np.uint64)
    return starts, ends


def inside_launch(addresses: np.ndarray, itemsize: int) -> np.ndarray | None:
    """Which of `addresses` (uint64) start `itemsize` bytes that lie within one storage of
    the launch being interpreted; None outside a launch."""
    if _launch is None:
        return None
    _, starts, ends = _launch
    # the storage starting at or before each address; spans never overlap (distinct storages)
    index = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
    inside = index >= 0
    inside[inside] &= addresses[inside] + np.uint64(itemsize) <= ends[index[inside]]
    return inside


def check(ptrs: np.ndarray, mask: np.ndarray | None, itemsize: int, what: str) -> None:
    """Raise OutOfBounds if an active lane addresses bytes outside the launch's storages."""
    if _launch is None:
        return
    name = _launch[0]
    addresses = np.asarray(ptrs, dtype=np.uint64).reshape(-1)
    if mask is not None:
        addresses = addresses[np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(ptrs)).reshape(-1)]
    if addresses.size == 0:
        return
    inside = inside_launch(addresses, itemsize)
    if not inside.all():
        bad = int(addresses[~inside][0])
        raise OutOfBounds(
            f"kernel {name} {what} {itemsize} byte(s) at 0x{bad:x}, outside every tensor it was launched with "
            f"({int((~inside).sum())} of {addresses.size} active lanes): an illegal address on a GPU")


def patch_interpreter_bounds() -> None:
    from triton.runtime import interpreter as itp

    executor, builder = itp.GridExecutor, itp.InterpreterBuilder
    if getattr(executor.__call__, "_kgb_bounds", False):
        return
    launch, load, store = executor.__call__, builder.create_masked_load, builder.create_masked_store
    rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas

    def __call__(self, *args, **kwargs):
        global _launch
        storages = [*_storages(list(args)), *_storages(list(kwargs.values())), *_call_storages]
        _launch = (getattr(self.fn, "__name__", "?"), *_ranges(storages))
        try:
            return launch(self, *args, **kwargs)
        finally:
            _launch = None

    # What follows the arguments read here differs between Triton versions (3.6's load takes
    # an eviction policy that 3.9's does not): it is passed on as it came.
    def create_masked_load(self, ptrs, mask, *rest, **kwargs):
        check(ptrs.data, mask.data, np.dtype(itp._get_np_dtype(ptrs.get_element_ty())).itemsize, "loaded")
        return load(self, ptrs, mask, *rest, **kwargs)

    def create_masked_store(self, ptrs, value, mask, *rest, **kwargs):
        check(ptrs.data, mask.data, value.data.dtype.itemsize, "stored")
        return store(self, ptrs, value, mask, *rest, **kwargs)

    def create_atomic_rmw(self, rmwOp, ptr, val, mask, *rest, **kwargs):
        check(ptr.data, mask.data, val.data.dtype.itemsize, "updated atomically")
        return rmw(self, rmwOp, ptr, val, mask, *rest, **kwargs)

    def create_atomic_cas(self, ptr, cmp, val, *rest, **kwargs):
        check(ptr.data, None, val.data.dtype.itemsize, "compared and swapped")
        return cas(self, ptr, cmp, val, *rest, **kwargs)

    global _interpreting
    _interpreting = True
    __call__._kgb_bounds = True  # type: ignore[attr-defined]
    executor.__call__ = __call__
    builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store
    builder.create_atomic_rmw, builder.create_atomic_cas = create_atomic_rmw, create_atomic_cas
