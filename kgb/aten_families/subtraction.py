"""The subtraction family: `sub` (self - alpha * other) and `rsub` (other - alpha * self),
each with a Tensor and a Scalar overload. One a + alpha * b kernel computes both; task
text, cases and inputs are written once here, the solution in subtraction_solutions.py."""

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

def _case(op, name, tag, shape, other, dtype, other_dtype=None, alpha=1, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = f"{op}_Tensor" if isinstance(other, tuple) else f"{op}_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  alpha=alpha, layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


def cases(op: str) -> list[Case]:
    def case(*args, **kwargs):
        return _case(op, *args, **kwargs)

    common = [
        case("smoke-bias-f32", "smoke", (5, 37), (37,), "float32", alpha=2),
        case("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
        case("smoke-scalar-i32", "smoke", (3, 7), 5, "int32", alpha=3, seed=2),
        case("resid-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
        case("alpha-f16", "check", (2, 1024, 1024), (2, 1024, 1024), "float16", alpha=0.5),
        case("bias-f32", "check", (1024, 3072), (3072,), "float32"),
        case("column-f32", "check", (1823, 781), (1823, 1), "float32", alpha=-1.5),
        case("outer-f32", "check", (64, 1, 33), (1, 47, 33), "float32"),
        case("t-other-bf16", "check", (300, 257), (300, 257), "bfloat16", other_layout="t"),
        case("slice-f16", "check", (128, 513), (128, 513), "float16", layout="slice", other_layout="t"),
        case("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
        case("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
        case("0d-minus-vector", "check", (), (70001,), "float32", alpha=3),
        case("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
        case("i64-alpha", "check", (1000, 1000), (1000, 1000), "int64", alpha=-3),
        case("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
        case("i16-wrap", "check", (64, 1000), (64, 1000), "int16", alpha=300),
        case("empty", "check", (0, 5), (5,), "float32"),
        case("zero-dim", "check", (), (), "float32", alpha=2),
        case("scalar-f32", "check", (1000, 1000), 2.5, "float32", alpha=-1.5),
        case("scalar-bf16-t", "check", (512, 1000), 0.125, "bfloat16", alpha=2, layout="t"),
        case("scalar-int-f16", "check", (512, 1000), 3, "float16"),
        case("scalar-float-i64", "check", (1000, 100), 2.5, "int64"),
        case("scalar-i8", "check", (1000, 100), 7, "int8", alpha=-2),
    ]
    if op == "sub":
        return [
            *common,
            case("sub-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
            case("sub-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
            case("bias-f16", "bench", (16384, 4096), (4096,), "float16"),
            case("scalar-f32-bench", "bench", (8192, 8192), 1.0, "float32"),
        ]
    return [
        *common,
        case("one-minus-f32", "check", (4, 1, 1, 2048), 1.0, "float32"),
        case("rsub-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
        case("rsub-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
        case("bias-f16", "bench", (16384, 4096), (4096,), "float16"),
        case("one-minus-bf16", "bench", (8192, 8192), 1.0, "bfloat16"),
    ]


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
