"""The judge's side of value provenance (kgb.evaluate.provenance records, in the candidate
process, what interpreted kernels stored and loaded): every finite value of an output, and
every finite value a kernel loaded, must be explained without the kernels having computed
it from data of the host's: by an input's value (or its cast, or its raw bits read through
another dtype), a scalar argument, 0 or 1, memory never written, or, for a load, a value a
kernel of the call stored before it. And the candidate process's provenance by address
(`host_written`): no kernel loaded, and no output holds, bytes the host wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from kgb import syntax
from kgb.evaluate.correctness import PERTURB_BYTE, leaves, tensors_in
from kgb.evaluate.provenance import HOST_WRITTEN


def unexplained(outputs: list[Any], stored: dict[str, torch.Tensor], inputs: list[Any]) -> str | None:
    """A message if some output value is neither stored by a kernel nor taken from an input,
    or if the candidate process saw a kernel load (or the call return) memory the host wrote
    (provenance by address, kgb.evaluate.address_book)."""
    if (found := host_written(stored)) is not None:
        return found
    if "float" not in stored:  # too many values stored to check them: the address check alone
        return None
    known = _Known(stored, inputs)
    for what, out in _named_outputs(outputs):
        if not isinstance(out, torch.Tensor):
            continue
        out = torch.view_as_real(out) if out.is_complex() else out
        missing, finite = known.missing(out.detach().cpu().reshape(-1))
        if missing.numel():
            return (f"{what}: {missing.numel()} of {finite} values were stored by no Triton kernel "
                    f"in this call (e.g. {float(missing[0]):.6g}); values must be computed by Triton kernels")
    return None


MAX_LITERALS = 10_000  # a source's numbers beyond these explain nothing more


def literal_numbers(source: str) -> list[float]:
    """The numbers written in a candidate's source (`1.4426950408889634`, `-0.5`): what a
    constant table its wrapper builds (`torch.tensor([...])`) holds, which a kernel may load.
    An answer cannot be written there: the cases it is checked on are drawn after the source
    is fixed. Until then such a table was refused as data from the host (the second red team
    of session 44)."""
    import ast

    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return []
    found: list[float] = []
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # 10**400: no float, so no value a kernel loads
                continue
            found += [number, -number]  # its sign is a unary minus above it
        if len(found) >= MAX_LITERALS:
            break
    return found


def unexplained_loads(stored: dict[str, torch.Tensor], inputs: list[Any]) -> str | None:
    """A message if some kernel loaded values that are neither the inputs' nor stored by a
    kernel of the call before they were loaded: data computed on the host, which a kernel
    then copies (or scales) into the output."""
    if (found := host_written(stored)) is not None:
        return found
    if "float" not in stored:
        return None
    known, count, example = _Known(stored, inputs), 0, 0.0
    for key, bits in stored.items():
        if not key.startswith("loaded ") or key.endswith(" seq"):
            continue
        dtype = getattr(torch, key.removeprefix("loaded "), None)
        if not isinstance(dtype, torch.dtype) or dtype.itemsize not in _UINT:
            return f"a kernel loaded values of an unknown dtype ({key!r})"
        missing, _ = known.missing(bits.to(_UINT[dtype.itemsize]).view(dtype), stored[f"{key} seq"])
        if missing.numel():
            example = example if count else float(missing[0])
            count += missing.numel()
    if count:
        return (f"a kernel loaded {count} values that are neither inputs nor values stored by a Triton kernel "
                f"in this call (e.g. {example:.6g}); values must be computed by Triton kernels")
    return None


def host_written(stored: dict[str, Any]) -> str | None:
    """What the candidate process saw the host write where a kernel then loaded, or where the
    call's outputs lie: numpy (or ctypes, or Python) wrote data a kernel only copied or
    decoded (session 49's red team: three of the source's numbers, or 32 values of 0.0 and
    1.0, per output value), or wrote the answer itself."""
    found = stored.get(HOST_WRITTEN)
    if found is None:
        return None
    return f"{str(found)[:2000]}; values must be computed by Triton kernels"


class _Known:
    """The values a call's kernels may store or load without computing them: what they
    stored (before, for a load), the inputs' values (cast to the dtype at hand, as a
    wrapper's `.to()` would) and raw bits (read through another dtype's view), scalar
    arguments, 0 and 1, and the bytes of memory never written."""

    def __init__(self, stored: dict[str, torch.Tensor], inputs: list[Any]) -> None:
        self.stored = stored
        self.inputs = [t.detach().cpu() for t in tensors_in(inputs)]
        self.scalars = torch.tensor([float(v) for v in _scalars(inputs)] + [0.0, 1.0], dtype=torch.float64)

    def missing(self, flat: torch.Tensor, at: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
        """The finite values of `flat` (one dtype) none of these explain (as float64), and
        how many were finite. With `at` (when each was first loaded), only what was stored
        before counts."""
        values = flat.to(torch.float64)
        finite = torch.isfinite(values)
        if not bool(finite.any()):
            return values[finite], 0
        fixed = torch.cat([*(_cast(t.reshape(-1), flat.dtype) for t in self.inputs), _cast(self.scalars, flat.dtype)])
        explained = torch.isin(values, fixed) | torch.isin(_raw_bits(flat), self._known_bits(flat.element_size()))
        at = at if at is not None else torch.full(values.shape, _NEVER)
        for key in ("float", "int"):
            explained |= _seen_before(values, at, *self._stored_as(key, flat.dtype))
        size = flat.element_size()
        explained |= _seen_before(_raw_bits(flat), at, self.stored[f"bits{size}"], self.stored[f"bits{size} seq"])
        missing = finite & ~explained
        return values[missing], int(finite.sum())

    def _stored_as(self, key: str, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored values (float or int) cast to `dtype`, and when each was first stored."""
        values, seqs = self.stored[key], self.stored[f"{key} seq"]
        if values.dtype.is_floating_point and not dtype.is_floating_point:
            keep = torch.isfinite(values)
            values, seqs = values[keep], seqs[keep]
        return values.to(dtype).to(torch.float64), seqs

    def _known_bits(self, size: int) -> torch.Tensor:
        """The inputs' raw bits, and memory never written (a kernel may read an output
        before it writes it): the candidate's allocations start out as one byte throughout
        (kgb.evaluate.correctness.fill_allocator_with_garbage)."""
        garbage = int.from_bytes(bytes([~PERTURB_BYTE & 0xFF]) * size, "little", signed=size == 8)
        return torch.cat([torch.tensor([garbage]), *(_raw_bits(t, size) for t in self.inputs)])


_NEVER = 1 << 62  # a sequence number after every store: an output is read once the call is over


def _seen_before(values: torch.Tensor, at: torch.Tensor, known: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Which `values` are among `known` values first seen before their own `at`."""
    if known.dtype.is_floating_point:
        keep = torch.isfinite(known)
        known, first = known[keep], first[keep]
    if known.numel() == 0:
        return torch.zeros(values.shape, dtype=torch.bool)
    unique, inverse = torch.unique(known, return_inverse=True)
    earliest = torch.full(unique.shape, _NEVER, dtype=torch.int64).scatter_reduce(0, inverse, first, "amin")
    where = torch.searchsorted(unique, values).clamp(max=unique.numel() - 1)
    return (unique[where] == values) & (earliest[where] < at)


def _raw_bits(t: torch.Tensor, size: int | None = None) -> torch.Tensor:
    """A tensor's bytes as `size`-byte (its item size by default) unsigned integers in int64,
    as the candidate sends raw bits; empty where its bytes do not divide into them."""
    t = torch.view_as_real(t) if t.is_complex() else t
    size = size or t.element_size()
    data = t.contiguous().reshape(-1).view(torch.uint8)
    if data.numel() % size or size not in _UINT:
        return torch.zeros(0, dtype=torch.int64)
    return data.view(_UINT[size]).to(torch.int64) & ((1 << (8 * size)) - 1 if size < 8 else -1)


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
    """The numbers (not NaN) in a value of lists, tuples and dicts."""
    return (v for v in leaves(value) if isinstance(v, bool | int | float) and v == v)


def _named_outputs(outputs: list[Any]) -> Iterator[tuple[str, Any]]:
    for i, value in enumerate(outputs):
        for j, t in enumerate(tensors_in(value)):
            yield f"output {i}.{j}", t
        for s in _scalars(value):
            yield f"output {i}", torch.tensor([float(s)], dtype=torch.float64)
