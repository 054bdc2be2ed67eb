"""Helpers every generated solution.py carries (pasted first, after the imports)."""

import torch


def _floats(t: torch.Tensor) -> torch.Tensor:
    """A complex buffer as its interleaved real and imaginary parts (a view)."""
    if t.is_complex():
        return t.view(torch.float64 if t.dtype == torch.complex128 else torch.float32)
    return t


def _base(n: int, inc: int) -> int:
    # BLAS: with a negative increment, element 0 sits at the far end of the buffer
    return (1 - n) * inc if inc < 0 else 0
