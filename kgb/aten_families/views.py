"""The comparison of the view operators (as_strided, expand, expand_as, narrow, select, t,
unsqueeze): their specs are hand-written, each with its own inputs, and bind this one
`compare`, since a view must share self's storage rather than hold equal values.

Also the two checks about views that other specs share: equal values (reshape) and a
storage left untouched outside the view an in-place op writes (exponential_, fill_,
zero_). All of it runs on the tensors' own device: on a GPU, copying whole outputs to the
host would cost more than the candidate's run."""

from __future__ import annotations

import torch


def same_values(a: torch.Tensor, e: torch.Tensor) -> bool:
    """Whether a and e hold the same elements, NaN equal to NaN (compared on e's device)."""
    a = a.to(e.device)
    same = a == e
    if a.is_floating_point():
        same |= a.isnan() & e.isnan()
    return bool(same.all())


def _storage_bytes(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def _outside_view(t: torch.Tensor) -> torch.Tensor:
    """A mask over t's storage bytes: True where no element of t lives (t must not overlap
    itself)."""
    size = t.itemsize
    inside = torch.zeros(t.untyped_storage().nbytes() // size, dtype=torch.bool, device=t.device)
    if t.numel():
        inside.as_strided(t.shape, t.stride(), t.storage_offset()).fill_(True)
    return (~inside)[:, None].expand(-1, size).reshape(-1)


def same_outside(t: torch.Tensor, ref: torch.Tensor) -> bool:
    """Whether t's and ref's storages hold the same bytes wherever t has no element."""
    got, want = _storage_bytes(t), _storage_bytes(ref)
    if got.shape != want.shape:
        return False
    outside = _outside_view(t)
    n = outside.numel()
    return not bool(((got[:n] != want[:n]) & outside).any())


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
        if a.numel() <= 1 << 24 and not same_values(a, e):
            return "return value: values differ from the reference"
    return None
