"""What the specs of unsafe_split and unsafe_split_with_sizes share: `self` drawn the same
way (plain or transposed; randn, or integers in [-1000, 1000) for int64), and the
comparison of a list of views, each of which must be the very view of self that the
reference returns. The two differ in their split argument, their cases and task text."""

from __future__ import annotations

import torch

from kgb.evaluate.correctness import compare_values


def split_self(p: dict, gen: torch.Generator, device: str) -> torch.Tensor:
    """`self` of `p["shape"]` and `p["dtype"]`, the transpose of a contiguous tensor where
    `p["transpose"]` (taken after the move to `device`)."""
    shape = tuple(p["shape"])
    make_shape = shape[::-1] if p["transpose"] else shape
    if p["dtype"] == "int64":
        x = torch.randint(-1000, 1000, make_shape, generator=gen)
    else:
        x = torch.randn(make_shape, generator=gen).to(getattr(torch, p["dtype"]))
    x = x.to(device)
    return x.t() if p["transpose"] else x


def compare(actual, expected, case, inputs):
    """Values as usual, and every piece must be the view of self the reference returns."""
    got, want = actual["return"], expected["return"]
    if not isinstance(got, list | tuple) or len(got) != len(want):
        return f"expected a list of {len(want)} tensors"
    base = inputs["self"]
    for k, (a, e) in enumerate(zip(got, want, strict=True)):
        message, _, _ = compare_values(f"piece {k}", a, e, case.reduction)
        if message:
            return message
        if a.untyped_storage().data_ptr() != base.untyped_storage().data_ptr():
            return f"piece {k} is not a view of self (it must share self's storage)"
        if a.storage_offset() != e.storage_offset() or (a.numel() and a.stride() != e.stride()):
            return (f"piece {k}: storage offset {a.storage_offset()} strides {a.stride()}, "
                    f"expected {e.storage_offset()} {e.stride()}")
    return None
