"""Where an output's values came from, in Triton's CPU interpreter.

A candidate that launches a decoy kernel and computes the answer some other way (another
thread or process, numpy, a BLAS through ctypes, plain Python) leaves outputs whose
values no Triton kernel ever stored. In the interpreter every store passes through
Python, so the candidate process records the values each call's kernels stored; the
judge then requires every finite output value to be one of those (cast to the output's
dtype, as a wrapper's `.to()` would), one of the inputs' values (outputs that move or
keep input values), a scalar argument, 0 or 1 (fills).

On a GPU stores cannot be watched this way; docs/design/threat-model.md says what stands
in for it there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from kgb.evaluate.correctness import tensors_in

MAX_VALUES = 4_000_000  # more than this and a call is not checked (cases on the CPU are small)

_recording: list[list] = []


def _note(handle: Any, mask: Any) -> None:
    """Note a stored handle's values, and its raw bits (a kernel may store a float's bits
    through an integer view, as a sign-flipping neg does)."""
    if not _recording:
        return
    import numpy as np

    keep = (lambda a: a[np.asarray(mask, dtype=bool)]) if mask is not None else (lambda a: a)
    raw = keep(np.asarray(handle.data)).copy()
    _recording[-1].append((keep(_as_logical(handle)).copy(), raw))


def patch_interpreter_stores() -> None:
    """Note every value an interpreted kernel stores (plain, masked, descriptor, atomic)."""
    from triton.runtime import interpreter as itp

    builder = itp.InterpreterBuilder
    if getattr(builder.create_masked_store, "_kgb_noted", False):
        return
    masked_store = builder.create_masked_store

    def create_masked_store(self, ptrs, value, mask, *rest, **kwargs):  # the rest differs between Triton versions
        _note(value, mask.data)
        return masked_store(self, ptrs, value, mask, *rest, **kwargs)

    create_masked_store._kgb_noted = True  # type: ignore[attr-defined]
    builder.create_masked_store = create_masked_store

    # Atomics store what they compute from memory: note the memory after the operation.
    for name in ("create_atomic_rmw", "create_atomic_cas", "create_atomic_store"):
        original = getattr(builder, name, None)
        if original is None:
            continue

        def atomic(self, *args, _original=original, **kwargs):
            result = _original(self, *args, **kwargs)
            ptr = next(a for a in args if hasattr(a, "data") and hasattr(a, "get_element_ty"))
            dtype = itp._get_np_dtype(ptr.get_element_ty())
            import numpy as np

            mask = np.ones_like(ptr.data, dtype=bool)
            after = itp._interpreter.load(ptr.data, mask, np.zeros_like(ptr.data, dtype=dtype), dtype)
            _note(itp.TensorHandle(after, ptr.get_element_ty()), None)
            return result

        setattr(builder, name, atomic)
    descriptor_store = getattr(builder, "create_descriptor_store", None)
    if descriptor_store is not None:

        def create_descriptor_store(self, desc, value, *rest, **kwargs):
            _note(value, None)
            return descriptor_store(self, desc, value, *rest, **kwargs)

        builder.create_descriptor_store = create_descriptor_store


def _as_logical(handle: Any) -> Any:
    """The interpreter keeps bfloat16 as raw uint16: widen those to float32 values."""
    import numpy as np
    import triton.language as tl

    data = np.asarray(handle.data)
    if getattr(handle.dtype, "scalar", handle.dtype) == tl.bfloat16 and data.dtype == np.uint16:
        return (data.astype(np.uint32) << 16).view(np.float32)
    return data


@contextmanager
def stored_values() -> Iterator[list]:
    """Collect what interpreted kernels store inside the block."""
    _recording.append([])
    try:
        yield _recording[-1]
    finally:
        _recording.pop()


def summarise(chunks: list) -> dict[str, torch.Tensor] | None:
    """The distinct stored values (float64 and int64) and raw bit patterns (int64, per item
    size); None when too many to check."""
    import numpy as np

    floats, ints, bits = [], [], {1: [], 2: [], 4: [], 8: []}
    total = 0
    for logical, raw in chunks:
        total += logical.size
        if total > MAX_VALUES:
            return None
        if logical.dtype.kind in "fc":
            floats.append(logical.astype(np.float64).ravel())
        else:
            ints.append(logical.astype(np.int64).ravel())
        size = raw.dtype.itemsize
        if size in bits and raw.dtype.kind != "c":
            bits[size].append(raw.view(f"u{size}").astype(np.int64).ravel())
    cat = lambda parts, dt: np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=dt)
    out = {"float": torch.from_numpy(cat(floats, np.float64)), "int": torch.from_numpy(cat(ints, np.int64))}
    out |= {f"bits{size}": torch.from_numpy(cat(parts, np.int64)) for size, parts in bits.items()}
    return out


def unexplained(outputs: list[Any], stored: dict[str, torch.Tensor], inputs: list[Any]) -> str | None:
    """A message if some output value is neither stored by a kernel nor taken from an input."""
    input_tensors = [t for t in tensors_in(inputs)]
    scalars = [float(v) for v in _scalars(inputs)] + [0.0, 1.0]
    for what, out in _named_outputs(outputs):
        if not isinstance(out, torch.Tensor):
            continue
        out = torch.view_as_real(out) if out.is_complex() else out
        if out.numel() == 0:
            continue
        flat = out.detach().cpu().reshape(-1)
        values = flat.to(torch.float64)
        finite = torch.isfinite(values)
        values = values[finite]
        if values.numel() == 0:
            continue
        size = flat.element_size()
        stored_bits = stored.get(f"bits{size}")
        same_bits = torch.zeros_like(finite)
        if stored_bits is not None and stored_bits.numel() and size in _UINT:
            raw = flat.view(_UINT[size]).to(torch.int64) & ((1 << (8 * size)) - 1 if size < 8 else -1)
            same_bits = torch.isin(raw, stored_bits)
        allowed = torch.cat([
            _cast(stored["float"], out.dtype), _cast(stored["int"], out.dtype),
            *(_cast(t.detach().cpu().reshape(-1), out.dtype) for t in input_tensors),
            _cast(torch.tensor(scalars, dtype=torch.float64), out.dtype),
        ])
        missing = ~torch.isin(values, allowed) & ~same_bits[finite]
        if bool(missing.any()):
            first = float(values[missing][0])
            return (f"{what}: {int(missing.sum())} of {values.numel()} values were stored by no Triton kernel "
                    f"in this call (e.g. {first:.6g}); values must be computed by Triton kernels")
    return None


_UINT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _cast(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if values.numel() == 0:
        return values.to(torch.float64).reshape(-1)
    source = (torch.view_as_real(values) if values.is_complex() else values).reshape(-1)
    if source.dtype.is_floating_point:
        # through float64 (exact for every float dtype, and float8 has no isfinite)
        source = source.to(torch.float64)
        if not dtype.is_floating_point:
            source = source[torch.isfinite(source)]
    return source.to(dtype).to(torch.float64)


def _scalars(value: Any) -> Iterator[float]:
    if isinstance(value, bool | int | float) and not isinstance(value, torch.Tensor):
        if isinstance(value, float) and value != value:
            return
        yield value
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _scalars(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)


def _named_outputs(outputs: list[Any]) -> Iterator[tuple[str, Any]]:
    for i, value in enumerate(outputs):
        for j, t in enumerate(tensors_in(value)):
            yield f"output {i}.{j}", t
        for s in _scalars(value):
            yield f"output {i}", torch.tensor([float(s)], dtype=torch.float64)
