"""The subtraction family: `sub` (self - alpha * other) and `rsub` (other - alpha * self),
each with a Tensor and a Scalar overload. One a + alpha * b kernel computes both; task
text and inputs are written once here, the cases in subtraction_cases.py, the solution in
subtraction_solutions.py."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.operators import Case

VERSION = 1


@dataclass(frozen=True)
class Subtraction:
    name: str
    title: str
    formula: str
    entries: str  # the task's paragraph on entry points
    examples: str  # promotion examples, in the member's own notation


SUBTRACTIONS = [
    Subtraction(
        "sub", "Scaled subtraction", "out = self - alpha * other",
        """\
Required entry points: `sub_Tensor` (other is a tensor) and `sub_Scalar` (other is a Python
number). The `out=` variants and the pure-scalar overloads (`sub.int`, `sub.float`, ...) are
not required.""",
        """\
float16 - bfloat16 -> float32, bfloat16 - 0-d float32
  -> bfloat16, int32 - 2.5 -> float32, int8 - int64 -> int64.""",
    ),
    Subtraction(
        "rsub", "Reversed scaled subtraction", "out = other - alpha * self",
        """\
(`self` is the one scaled by `alpha` and subtracted.) Required entry points: `rsub_Tensor`
(other is a tensor) and `rsub_Scalar` (other is a Python number). The `out=` variants are
not required.""",
        """\
float16 with bfloat16 -> float32, bfloat16 with a 0-d
  float32 -> bfloat16, int32 with 2.5 -> float32, int8 with int64 -> int64.""",
    ),
]

TASK = """\
{title}: `aten::{name}.Tensor` and `aten::{name}.Scalar`.

    {formula}

{entries}

- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous (transposed, sliced, expanded) and
  must not be modified; the result is a new tensor (any strides).
- Dtypes: float16, bfloat16, float32 and int8..int64. The result dtype is PyTorch's
  promotion of the two operands: dimensioned tensors decide first, a 0-d tensor or a Python
  number only raises the category (int -> float), and a Python float meeting integer
  tensors gives float32. Examples: {examples}
- Precision: float16/bfloat16 are computed in float32 and rounded once; `alpha` stays in
  the compute precision. Integers wrap around on overflow.
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Two bool tensors are rejected by PyTorch and are not tested. Empty and 0-d tensors are
  valid.
"""

SIGNATURES = '''\
def {name}_Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha: int | float = 1) -> torch.Tensor:
    """aten::{name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

def {name}_Scalar(self: torch.Tensor, other: int | float, alpha: int | float = 1) -> torch.Tensor:
    """aten::{name}.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
'''

REFERENCES = '''\
def {name}_Tensor(self, other, *, alpha=1):
    return torch.ops.aten.{name}.Tensor(self, other, alpha=alpha)


def {name}_Scalar(self, other, alpha=1):
    return torch.ops.aten.{name}.Scalar(self, other, alpha)


reference = {{"{name}_Tensor": {name}_Tensor, "{name}_Scalar": {name}_Scalar}}
'''

def cases(op: str) -> list[Case]:
    from kgb.aten_families import subtraction_cases  # not at the top: see its docstring

    return subtraction_cases.cases(op)


def values(shape, dtype, gen):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 3).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    self = laid_out(p["shape"], p["layout"], lambda shape: values(shape, dtype, gen), device)
    other = p["other"]
    if isinstance(other, tuple):
        other = laid_out(other, p["other_layout"], lambda shape: values(shape, other_dtype, gen), device)
    if isinstance(other, torch.Tensor) and other.ndim == 0 and self.dtype in (torch.float16, torch.bfloat16):
        other = other.to(self.dtype).to(other.dtype)  # representable in the common dtype
    return dict(self=self, other=other, alpha=p["alpha"])


def members() -> list[Member]:
    from kgb.aten_families.subtraction_solutions import solution_of

    return [
        Member(
            name=s.name, family="subtraction", version=VERSION,
            task=TASK.format(name=s.name, title=s.title, formula=s.formula, entries=s.entries,
                             examples=s.examples),
            signatures=SIGNATURES.format(name=s.name), cases=cases(s.name),
            references=REFERENCES.format(name=s.name),
            solution=solution_of(s.name),
        )
        for s in SUBTRACTIONS
    ]
