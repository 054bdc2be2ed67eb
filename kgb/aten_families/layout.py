"""The operand layouts of the binary elementwise families (comparison, division,
subtraction): contiguous, transposed or every other column."""

from __future__ import annotations

from collections.abc import Callable

import torch


def laid_out(shape: tuple, layout: str | None, draw: Callable[[tuple], torch.Tensor], device: str) -> torch.Tensor:
    """A tensor of `shape` on `device`: contiguous (layout None), `t` (the transpose of a
    contiguous tensor) or `slice` (every other column of one twice as wide). `draw(shape)`
    makes the values on the CPU; the view is taken after the move, which would make it
    contiguous."""
    if layout == "t":
        return draw(shape[::-1]).to(device).t()
    if layout == "slice":
        return draw((*shape[:-1], 2 * shape[-1])).to(device)[..., ::2]
    return draw(shape).to(device)
