"""The comparison family: `eq`, `gt` and `le`, each with a Tensor and a Scalar overload.
The members differ only in their operator symbol; task text, cases, inputs and solution
are written once here."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1


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

def _case(op, name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = f"{op}_Tensor" if isinstance(other, tuple) else f"{op}_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


def cases(op: str) -> list[Case]:
    rows = [
        ("smoke-f32", "smoke", (5, 37), (37,), "float32"),
        ("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", "t", None, 1),
        ("smoke-scalar-i32", "smoke", (3, 7), 2, "int32", None, None, None, 2),
        ("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
        ("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
        ("f32-column", "check", (1823, 781), (1823, 1), "float32"),
        ("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
        ("f32-t-slice", "check", (300, 257), (300, 257), "float32", None, "t", "slice"),
        ("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
        ("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
        ("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
        ("i64", "check", (1000, 1000), (1000, 1000), "int64"),
        ("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
        ("u8", "check", (64, 1000), (64, 1000), "uint8"),
        ("bool", "check", (100, 77), (100, 77), "bool"),
        ("bool-f16", "check", (100, 77), (77,), "bool", "float16"),
        ("empty", "check", (0, 5), (5,), "float32"),
        ("zero-dim", "check", (), (), "float32"),
        ("scalar-f32", "check", (1000, 1000), 0.5, "float32"),
        ("scalar-bf16-t", "check", (512, 1000), -1.5, "bfloat16", None, "t"),
        ("scalar-int-f16", "check", (512, 1000), 1, "float16"),
        ("scalar-float-i64", "check", (1000, 100), 1.5, "int64"),
        ("scalar-i64", "check", (1000, 100), -2, "int64"),
        ("scalar-bool", "check", (100, 77), True, "bool"),
        ("scalar-nan", "check", (100, 77), float("nan"), "float32"),
        (f"{op}-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
        (f"{op}-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
        (f"{op}-i64-rows", "bench", (8192, 8192), (8192,), "int64"),
        (f"{op}-scalar-f16", "bench", (8192, 8192), 0.0, "float16"),
    ]
    return [_case(op, *row) for row in rows]


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
