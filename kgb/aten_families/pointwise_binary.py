"""The inputs of the pointwise family's operators on two operands (pointwise.py): fmax,
heaviside, logaddexp2 and mul; their cases are in pointwise_binary_cases.py. fmax and
heaviside draw like the comparisons (small halves, so that ties and zeros are frequent, 5%
NaN); mul like the subtractions (wide normals and integers)."""

from __future__ import annotations

import torch

from kgb.aten_families import comparison, subtraction
from kgb.aten_families.layout import laid_out
from kgb.operators import Case

# what logaddexp2's `scale=None` cases cross
LOGADDEXP2_SPECIAL = [0.0, 1.0, -1.0, 30.0, -30.0, 200.0, -200.0, float("inf"), float("-inf"), float("nan")]


def _operands(case, gen, device, rand):
    """`self`, and `other` (a tensor where the case gives a shape, else the number itself),
    drawn by `rand(shape, dtype, gen)` and laid out as the case says. A 0-d `other` of a
    wider dtype than a half-precision `self` holds values exactly representable in the
    common dtype (PyTorch's CPU and CUDA kernels disagree on rounding it first)."""
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    self = laid_out(p["shape"], p["layout"], lambda shape: rand(shape, dtype, gen), device)
    other = p["other"]
    if isinstance(other, tuple):
        other = laid_out(other, p["other_layout"], lambda shape: rand(shape, other_dtype, gen), device)
    if isinstance(other, torch.Tensor) and other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
        other = other.to(dtype).to(other.dtype)
    return self, other


def fmax_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return comparison.make_inputs(case, gen, device)  # the comparisons' cases have fmax's params


def heaviside_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])

    def draw(shape):  # the comparisons' draw (private there, used here rather than copied)
        return comparison.values(shape, dtype, gen)

    return dict(self=laid_out(p["shape"], p["layout"], draw, device),
                values=laid_out(p["values"], p["values_layout"], draw, device))


def logaddexp2_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    if p["scale"] is None:
        values = torch.tensor(LOGADDEXP2_SPECIAL)
        return dict(self=values.reshape(p["shape"]).to(getattr(torch, p["dtype"])).to(device),
                    other=values.reshape(p["other"]).to(getattr(torch, p["other_dtype"])).to(device))

    def normal(shape, dtype, gen):
        return (torch.randn(shape, generator=gen) * p["scale"]).to(dtype)

    self, other = _operands(case, gen, device, normal)
    return dict(self=self, other=other)


def _mul_rand(shape, dtype, gen):
    """The subtractions' draw (private there, used here rather than copied), and bool."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return subtraction.values(shape, dtype, gen)


def mul_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    self, other = _operands(case, gen, device, _mul_rand)
    return dict(self=self, other=other)
