"""The comparison family: `eq`, `gt` and `le`, each with a Tensor and a Scalar overload.
The members differ only in their operator symbol; task text and inputs are written once
here, the cases in comparison_cases.py, the solution in comparison_solutions.py."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1
# Every integer operand holds plain values, which the judge may move about for a replay's
# warm-up as it moves floating ones (Spec.turned_args, kgb.evaluate.first_call)
TURNED_ARGS = ("self", "other")


@dataclass(frozen=True)
class Comparison:
    name: str
    symbol: str
    title: str


COMPARISONS = [
    Comparison("eq", "==", "Equality comparison"),
    Comparison("gt", ">", "Greater-than comparison"),
    Comparison("le", "<=", "Less-or-equal comparison"),
]

TASK = """\
{title} `self {symbol} other`: `aten::{name}.Tensor` and `aten::{name}.Scalar`.

    out = self {symbol} other        (a bool tensor)

Required entry points: `{name}_Tensor` (other is a tensor) and `{name}_Scalar` (other is a
Python number). The `out=` variants and the overloads on Python values (`{name}.int`,
`{name}.float`, `{name}.str`, lists, ...) are not required.

- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape and dtype torch.bool. Inputs may be non-contiguous (transposed,
  sliced, expanded) and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. Both operands are first
  converted to their common dtype under PyTorch's promotion (dimensioned tensors decide, a
  0-d tensor or a Python number only raises the category: int32 vs 2.5 compares as
  float32, bfloat16 vs a 0-d float32 tensor compares as bfloat16, i.e. the 0-d value is
  first rounded to bfloat16; float16 vs bfloat16 compares as float32), then compared.
- IEEE semantics: any comparison involving NaN is false; -0.0 equals 0.0. Cases use many
  equal values so that ties matter.
- Empty and 0-d tensors are valid.
"""

SIGNATURES = '''\
def {name}_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::{name}.Tensor(Tensor self, Tensor other) -> Tensor"""

def {name}_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::{name}.Scalar(Tensor self, Scalar other) -> Tensor"""
'''

REFERENCES = '''\
def {name}_Tensor(self, other):
    return torch.ops.aten.{name}.Tensor(self, other)


def {name}_Scalar(self, other):
    return torch.ops.aten.{name}.Scalar(self, other)


reference = {{"{name}_Tensor": {name}_Tensor, "{name}_Scalar": {name}_Scalar}}
'''

def cases(op: str) -> list[Case]:
    from kgb.aten_families import comparison_cases  # not at the top: see its docstring

    return comparison_cases.cases(op)


def values(shape, dtype, gen):
    """Small integers (and halves, for floats) so that ties are frequent; 5% NaN in floats."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -5
        return torch.randint(lo, 6, shape, generator=gen).to(dtype)
    x = torch.randint(-6, 7, shape, generator=gen) / 2
    x[torch.rand(shape, generator=gen) < 0.05] = float("nan")
    return x.to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    self = laid_out(p["shape"], p["layout"], lambda shape: values(shape, dtype, gen), device)
    other = p["other"]
    if isinstance(other, tuple):
        other = laid_out(other, p["other_layout"], lambda shape: values(shape, other_dtype, gen), device)
    return dict(self=self, other=other)


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solution
    from kgb.aten_families.comparison_solutions import KERNEL

    out = []
    for c in COMPARISONS:
        words = dict(name=c.name, symbol=c.symbol, title=c.title)
        out.append(Member(
            name=c.name,
            family="comparison",
            version=VERSION,
            task=TASK.format(**words),
            signatures=SIGNATURES.format(**words),
            cases=cases(c.name),
            references=REFERENCES.format(**words),
            solution=solution(["strided"], KERNEL.format(**words)),
        ))
    return out
