"""The comparison of the view operators (as_strided, expand, expand_as, narrow, select, t,
unsqueeze): their specs are hand-written, each with its own inputs, and bind this one
`compare`, since a view must share self's storage rather than hold equal values."""

from __future__ import annotations

import torch


def _same_values(a: torch.Tensor, e: torch.Tensor) -> bool:
    a, e = a.cpu(), e.cpu()
    same = a == e
    if a.is_floating_point():
        same |= a.isnan() & e.isnan()
    return bool(same.all())


def compare(actual, expected, case, inputs):
    """A view: same shape, dtype and device; shares self's storage; same element
    positions in it (offset, and strides of dims longer than 1); same values."""
    a, e, base = actual["return"], expected["return"], inputs["self"]
    if not isinstance(a, torch.Tensor):
        return f"return value: expected a tensor, got {type(a).__name__}"
    for what, got, want in (
        ("shape", tuple(a.shape), tuple(e.shape)),
        ("dtype", a.dtype, e.dtype),
        ("device", a.device.type, e.device.type),
    ):
        if got != want:
            return f"return value: {what} {got}, expected {want}"
    if a.untyped_storage().data_ptr() != base.untyped_storage().data_ptr():
        return "return value: not a view of self (it must share self's storage, not copy it)"
    if a.numel():
        if a.storage_offset() != e.storage_offset():
            return (
                f"return value: storage offset {a.storage_offset()}, expected {e.storage_offset()}"
            )
        if any(
            n > 1 and sa != se for n, sa, se in zip(a.shape, a.stride(), e.stride(), strict=True)
        ):
            return f"return value: strides {a.stride()}, expected {e.stride()}"
        # implied by the checks above; kept as a cross-check where it is cheap
        if a.numel() <= 1 << 24 and not _same_values(a, e):
            return "return value: values differ from the reference"
    return None
