"""The trigonometric family: `cos` and `sin`, elementwise on floats (integers and bool
promoted to float32). The members differ only in their function; task text and inputs are
written once here, the cases once in trigonometric_cases.py, the solution once in
trigonometric_solutions.py."""

from __future__ import annotations

import torch

from kgb.aten_families.member import Member
from kgb.operators import Case

VERSION = 1

TITLES = {"cos": "Cosine", "sin": "Sine"}

TASK = """\
{title}, elementwise: `aten::{name}` (default overload).

out[i] = {name}(self[i]), the argument in radians.

- Any finite x is valid, large ones too (|x| up to 1e30): reduce the argument accurately,
  the result must stay correct to float32 accuracy. +-inf and NaN give NaN.
- Compute half-precision inputs in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `{name}` (aten::{name}(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads ({name}.int, {name}.float, {name}.complex, {name}.Scalar).
"""

SIGNATURES = '''\
def {name}(self: torch.Tensor) -> torch.Tensor:
    """aten::{name}(Tensor self) -> Tensor"""
'''

# Special values: zeros, multiples of pi/2 (results near 0), large arguments that need an
# accurate range reduction, infinities and NaN.
EDGE = [0.0, -0.0, 1e-30, 1.5707964, -1.5707964, 3.1415927, 6.2831855, 100.0, -1000.5, 12345.678,
        1e6, -3.3e7, 1e20, 1e30, float("inf"), float("-inf"), float("nan")]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    if dist == "edge":
        vals = torch.tensor(EDGE, dtype=torch.float32)
        idx = torch.randperm(max(n, 1), generator=gen)[:n] % len(EDGE)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "int":
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        return torch.randint(-100000, 100000, shape, generator=gen).to(dtype)
    if dist == "wide":  # +-10**u for u in [-3, 6]
        u = torch.rand(shape, generator=gen) * 9 - 3
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return (sign * 10.0 ** u.double()).to(dtype)
    return (torch.randn(shape, generator=gen) * 4).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    base = list(shape)
    if layout == "transposed":
        base[-2], base[-1] = shape[-1], shape[-2]
    elif layout == "strided":
        base[-1] = 2 * shape[-1]
    elif layout == "expanded":
        base[-2] = 1
    # draw on the CPU, move, then take the view, so that the layout survives the move
    x = _draw(p["dist"], base, getattr(torch, p["dtype"]), gen).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    elif layout == "expanded":
        x = x.expand(shape)
    return dict(self=x)


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.trigonometric_cases import CASES

    return CASES  # the same for both


def members() -> list[Member]:
    from kgb.aten_families.trigonometric_solutions import solution_of

    return [
        Member(
            name=name, family="trigonometric", version=VERSION,
            task=TASK.format(name=name, title=title), signatures=SIGNATURES.format(name=name),
            cases=cases(name), references=f"reference = torch.ops.aten.{name}.default\n",
            solution=solution_of(name),
        )
        for name, title in TITLES.items()
    ]
