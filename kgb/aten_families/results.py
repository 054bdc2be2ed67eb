"""Checks of a result's form that several specs share before they look at its values: a
returned tensor's shape, dtype and device (and, for the empties, strides); an in-place
op's return of `self` itself; the storage outside the view an in-place op writes left as
it was. Each returns the message of the first failure, or None."""

from __future__ import annotations

import torch

from kgb.aten_families.views import same_outside
from kgb.evaluate.correctness import compare_values


def tensor_form(a, e: torch.Tensor, strides: bool = False) -> str | None:
    """Whether the returned `a` is a tensor with `e`'s shape, (strides,) dtype and device
    type (any GPU counts as the reference's)."""
    if not isinstance(a, torch.Tensor):
        return f"return value: expected a tensor, got {type(a).__name__}"
    checks = [("shape", tuple(a.shape), tuple(e.shape))]
    if strides:
        checks.append(("stride", a.stride(), e.stride()))
    checks += [("dtype", a.dtype, e.dtype), ("device", a.device.type, e.device.type)]
    for what, got, want in checks:
        if got != want:
            return f"return value: {what} {got}, expected {want}"
    return None


def is_self(ret: torch.Tensor, self_: torch.Tensor) -> bool:
    """Whether `ret` is `self_` as a view: the same storage, offset, shape and strides."""
    return (ret.untyped_storage().data_ptr() == self_.untyped_storage().data_ptr()
            and ret.storage_offset() == self_.storage_offset()
            and ret.shape == self_.shape and ret.stride() == self_.stride())


def returns_self(ret, self_: torch.Tensor, op: str) -> str | None:
    """Whether an in-place op returned `self`: the same storage, offset, shape and strides."""
    if not isinstance(ret, torch.Tensor):
        return f"return value: expected self, got {type(ret).__name__}"
    if not is_self(ret, self_):
        return f"return value: {op} must return self (the same storage, offset, shape and strides)"
    return None


def outside_untouched(self_: torch.Tensor, ref: torch.Tensor) -> str | None:
    """Whether the storage of `self` outside its view holds what the reference's does."""
    # a view as large as its storage (self is non-overlapping) leaves nothing outside it
    covers_storage = self_.numel() * self_.itemsize == self_.untyped_storage().nbytes()
    if not covers_storage and not same_outside(self_, ref):
        return "argument self: storage outside the view of self was modified"
    return None


def in_place_compare(op: str):
    """The compare of an in-place op: the default value comparison of `self` and of the
    return value, then the return value must be `self` itself."""

    def compare(actual, expected, case, inputs):
        for key in ("self", "return"):
            message, _, _ = compare_values(key, actual.get(key), expected[key], case.reduction)
            if message:
                return message
        return None if is_self(actual["return"], inputs["self"]) else f"the return value is not `self` ({op} must return its updated input)"

    return compare
