"""Equality comparison `self == other`: `aten::eq.Tensor` and `aten::eq.Scalar`.

    out = self == other        (a bool tensor)

Required entry points: `eq_Tensor` (other is a tensor) and `eq_Scalar` (other is a
Python number). The `out=` variants and the overloads on Python values (`eq.int`,
`eq.float`, `eq.str`, lists, ...) are not required.

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

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def eq_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::eq.Tensor(Tensor self, Tensor other) -> Tensor"""

def eq_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::eq.Scalar(Tensor self, Scalar other) -> Tensor"""
'''


def _case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = "eq_Tensor" if isinstance(other, tuple) else "eq_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _case("smoke-scalar-i32", "smoke", (3, 7), 2, "int32", seed=2),
    _case("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _case("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _case("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    _case("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _case("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _case("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
    _case("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _case("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
    _case("u8", "check", (64, 1000), (64, 1000), "uint8"),
    _case("bool", "check", (100, 77), (100, 77), "bool"),
    _case("bool-f16", "check", (100, 77), (77,), "bool", "float16"),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("scalar-f32", "check", (1000, 1000), 0.5, "float32"),
    _case("scalar-bf16-t", "check", (512, 1000), -1.5, "bfloat16", layout="t"),
    _case("scalar-int-f16", "check", (512, 1000), 1, "float16"),
    _case("scalar-float-i64", "check", (1000, 100), 1.5, "int64"),
    _case("scalar-i64", "check", (1000, 100), -2, "int64"),
    _case("scalar-bool", "check", (100, 77), True, "bool"),
    _case("scalar-nan", "check", (100, 77), float("nan"), "float32"),
    _case("eq-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("eq-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _case("eq-i64-rows", "bench", (8192, 8192), (8192,), "int64"),
    _case("eq-scalar-f16", "bench", (8192, 8192), 0.0, "float16"),
]


def _rand(shape, dtype, gen):
    """Small integers (and halves, for floats) so that ties are frequent; 5% NaN in floats."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -5
        return torch.randint(lo, 6, shape, generator=gen).to(dtype)
    x = torch.randint(-6, 7, shape, generator=gen) / 2
    x[torch.rand(shape, generator=gen) < 0.05] = float("nan")
    return x.to(dtype)


def _tensor(shape, dtype, layout, gen, device):
    if layout == "t":
        return _rand(shape[::-1], dtype, gen).to(device).t()
    if layout == "slice":
        return _rand((*shape[:-1], 2 * shape[-1]), dtype, gen).to(device)[..., ::2]
    return _rand(shape, dtype, gen).to(device)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    self = _tensor(p["shape"], getattr(torch, p["dtype"]), p["layout"], gen, device)
    other = p["other"]
    if isinstance(other, tuple):
        other = _tensor(other, getattr(torch, p["other_dtype"]), p["other_layout"], gen, device)
    return dict(self=self, other=other)


def eq_Tensor(self, other):
    return torch.ops.aten.eq.Tensor(self, other)


def eq_Scalar(self, other):
    return torch.ops.aten.eq.Scalar(self, other)


reference = {"eq_Tensor": eq_Tensor, "eq_Scalar": eq_Scalar}
