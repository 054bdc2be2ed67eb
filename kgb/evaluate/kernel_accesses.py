"""The interpreter's memory accesses, followed into the book of memory
(kgb.evaluate.address_book).

Triton's interpreter loads, stores and updates atomically through one module of raw host
memory accesses, whatever builder method makes them: wrapping that module follows every
lane a kernel reads or writes while a call is watched. Each launch also names the kernel it
runs (for the messages), and a launch's tensors that kgb never saw made are the host's.
"""

from __future__ import annotations

from typing import Any

from kgb.evaluate.address_book import book

_PATCHED: set[str] = set()  # the interpreter's patches made in this process


class _Interpreter:
    """Triton's interpreter module (its loads, stores and atomics on raw host memory), with
    each access followed while a call is watched."""

    def __init__(self, inner: Any) -> None:
        self._kgb_inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kgb_inner, name)

    def load(self, ptrs, mask, other, dtype):
        import numpy as np

        if book.active:
            book.loading(ptrs, mask, np.dtype(dtype).itemsize)
        return self._kgb_inner.load(ptrs, mask, other, dtype)

    def store(self, ptrs, value, mask):
        import numpy as np

        done = self._kgb_inner.store(ptrs, value, mask)
        if book.active:
            book.storing(ptrs, mask, np.asarray(value).dtype.itemsize)
        return done

    def atomic_rmw(self, op, ptrs, value, mask, *rest):
        import numpy as np

        size = np.asarray(value).dtype.itemsize
        if book.active:
            book.loading(ptrs, mask, size)
        done = self._kgb_inner.atomic_rmw(op, ptrs, value, mask, *rest)
        if book.active:
            book.storing(ptrs, mask, size)
        return done

    def atomic_cas(self, ptrs, cmp, value, *rest):
        import numpy as np

        size = np.asarray(value).dtype.itemsize
        if book.active:
            book.loading(ptrs, None, size)
        done = self._kgb_inner.atomic_cas(ptrs, cmp, value, *rest)
        if book.active:
            book.storing(ptrs, None, size)
        return done


def patch_interpreter_addresses() -> None:
    """Follow every memory access of the interpreter (through its module of raw loads and
    stores, whatever builder method makes it) and name the kernel each launch runs; a
    launch's tensors that kgb never saw made are memory the host made."""
    from triton.runtime import interpreter as itp

    from kgb.evaluate.bounds import _storages

    if not isinstance(itp._interpreter, _Interpreter):
        itp._interpreter = _Interpreter(itp._interpreter)
    executor = itp.GridExecutor
    if "addresses" in _PATCHED or getattr(executor.__call__, "_kgb_addresses", False):
        return
    _PATCHED.add("addresses")
    launch = executor.__call__

    def __call__(self, *args, **kwargs):
        if not book.active:
            return launch(self, *args, **kwargs)
        kernel = book.kernel
        book.kernel = getattr(self.fn, "__name__", "?")
        for storage in [*_storages(list(args)), *_storages(list(kwargs.values()))]:
            if storage.device.type == "cpu" and book.entry(storage) is None:
                book.register(storage, f"a {storage.nbytes()}-byte storage over memory that no PyTorch op made", host=True)
        try:
            return launch(self, *args, **kwargs)
        finally:
            book.kernel = kernel

    __call__._kgb_addresses = True  # type: ignore[attr-defined]
    executor.__call__ = __call__
