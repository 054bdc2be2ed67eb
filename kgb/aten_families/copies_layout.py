"""Inputs and comparisons of the copies family's layout copies: clone, contiguous,
_to_copy, to and copy_ (which compares as the in-place index_put_ does:
indexing.compare); their cases are in copies_cases.py. Each draws its tensors in one of a
few layouts (plain, transposed, permuted, every other column, channels-last, a broadcast
row), values exact for a copy (`exact_values`) or in range for every conversion
(`converted_values`)."""

from __future__ import annotations

from functools import partial

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

FORMATS = {None: None, "contiguous": torch.contiguous_format, "channels_last": torch.channels_last}


def laid_out(shape, layout, draw, device):
    """A tensor of `shape` on `device`, `draw(shape)` making the values on the CPU; the view
    is taken after the move: "plain", "t" (transposed), "perm" (3-D permuted), "gaps" (every
    other column), "cl" (channels-last), "expand" (a row broadcast with stride 0)."""
    shape = tuple(shape)
    if layout == "t":
        return draw(shape[::-1]).to(device).t()
    if layout == "perm":
        return draw((shape[2], shape[0], shape[1])).to(device).permute(1, 2, 0)
    if layout == "gaps":
        return draw((shape[0], 2 * shape[1])).to(device)[:, ::2]
    if layout == "expand":
        return draw((1, shape[1])).to(device).expand(shape)
    x = draw(shape).to(device)
    return x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x


def exact_values(dtype, shape, gen):
    """Values a copy must keep bit for bit: wide integers, NaN and infinities ("special")."""
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32"):
        return torch.randint(-2**40, 2**40, shape, generator=gen).to(getattr(torch, dtype))
    if dtype == "special":
        x = torch.randn(shape, generator=gen)
        x[::7], x[1::11], x[2::13] = float("nan"), float("inf"), -float("inf")
        return x
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def converted_values(dtype, shape, gen, int64_low=-100):
    """Values every conversion keeps in range: integers in [-100, 100) (int64 from
    `int64_low`), floats within int8's range, a tenth of them exact zeros."""
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32", "int8"):
        lo = int64_low if dtype == "int64" else -100
        return torch.randint(lo, 100, shape, generator=gen, dtype=getattr(torch, dtype))
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * 30).clamp(-120, 120)
    x[torch.rand(shape, generator=gen) < 0.1] = 0  # exact zeros matter for bool results
    return x.to(getattr(torch, dtype))


def _strides_message(a, e):
    for d in range(e.ndim):
        if e.shape[d] > 1 and a.stride(d) != e.stride(d):
            return f"strides {a.stride()}, expected {e.stride()} (dims of size > 1 must match)"
    return None


def _shares(a, x):
    return a.numel() and a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


# ---- clone and contiguous: one tensor in some layout, copied exactly -----------------------


def clone_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = laid_out(p["shape"], p["layout"], partial(exact_values, p["dtype"], gen=gen), device)
    return dict(self=x, memory_format=FORMATS[p["memory_format"]])


def contiguous_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    inputs = clone_inputs(case, gen, device)
    if inputs["memory_format"] is None:  # contiguous's memory_format is not optional
        inputs["memory_format"] = torch.contiguous_format
    return inputs


def _exact_copy_message(a, e):
    """What is wrong with a as an exact copy of e laid out as e, if anything."""
    if not isinstance(a, torch.Tensor):
        return f"expected a tensor, got {type(a).__name__}"
    if a.shape != e.shape or a.dtype != e.dtype or a.device.type != e.device.type:
        return f"got {tuple(a.shape)} {a.dtype} on {a.device}, expected {tuple(e.shape)} {e.dtype} on {e.device}"
    same = (a == e) | (a != a) & (e != e) if e.is_floating_point() else a == e
    if not bool(same.all()):
        return f"{int((~same).sum())} of {e.numel()} elements differ from self's (a copy must be exact)"
    return _strides_message(a, e)


def clone_compare(actual, expected, case, inputs):
    """Exact values, the reference's strides, and new memory."""
    a = actual["return"]
    message = _exact_copy_message(a, expected["return"])
    if message is None and _shares(a, inputs["self"]):
        message = "the result shares self's memory; clone must copy"
    return message


def contiguous_compare(actual, expected, case, inputs):
    """Exact values; self itself where ATen returns it, else new memory with its strides."""
    a, x = actual["return"], inputs["self"]
    message = _exact_copy_message(a, expected["return"])
    if message is not None:
        return message
    if x.is_contiguous(memory_format=inputs["memory_format"]):
        return None if a is x else "self is already contiguous in that format: expected self itself"
    if _shares(a, x):
        return "the result shares self's memory, but self needed a copy"
    return None


# ---- _to_copy and to: one tensor converted to another dtype and/or layout ------------------


def _converted_self(p, gen, device):
    return laid_out(p["shape"], p["layout"], partial(converted_values, p["src"], gen=gen), device)


def _target_dtype(p):
    return getattr(torch, p["dst"]) if p["dst"] else None


def to_copy_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _converted_self(p, gen, device)
    return dict(self=x, dtype=_target_dtype(p), device=x.device if p["same_device"] else None,
                memory_format=FORMATS[p["memory_format"]])


def to_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _converted_self(p, gen, device)
    dtype = _target_dtype(p)
    common = dict(non_blocking=False, copy=p["copy"], memory_format=FORMATS[p["memory_format"]])
    if case.entry == "to_dtype":
        return dict(self=x, dtype=dtype, **common)
    if case.entry == "to_device":
        return dict(self=x, device=x.device, dtype=dtype, **common)
    if case.entry == "to_other":
        return dict(self=x, other=torch.zeros(3, dtype=dtype, device=device), **common)
    return dict(self=x, dtype=dtype, layout=torch.strided, device=None, pin_memory=None, **common)


def to_copy_compare(actual, expected, case, inputs):
    """Values, the layout of the result, and that it is a new tensor."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    message = _strides_message(a, e)
    if message is None and _shares(a, inputs["self"]):
        message = "the result shares self's memory; _to_copy must return a new tensor"
    return message


def to_compare(actual, expected, case, inputs):
    """Values; then either self itself (where ATen aliases) or a new tensor laid out as ATen's."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    x = inputs["self"]
    # whether ATen returns self depends only on metadata: ask it on the candidate's inputs
    overload = getattr(torch.ops.aten.to, case.entry.removeprefix("to_"))
    if overload(**inputs) is x:
        return None if a is x else "expected self itself: nothing needed converting or copying"
    if _shares(a, x):
        return "the result shares self's memory, but a conversion or copy was required"
    return _strides_message(a, e)


# ---- copy_: src converted into an existing self ----------------------------------------------


def copy_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    # int64 sources also feed uint8 targets: no negative ones
    dst = laid_out(p["shape"], p["dst_layout"], partial(converted_values, p["dst"], gen=gen, int64_low=0), device)
    src = laid_out(p["src_shape"], p["src_layout"], partial(converted_values, p["src"], gen=gen, int64_low=0),
                   device)
    return dict(self=dst, src=src, non_blocking=False)
