"""Elementwise product: `aten::mul.Tensor` and `aten::mul.Scalar`.

    out = self * other

Required entry points: `mul_Tensor` (other is a tensor) and `mul_Scalar` (other is a Python
number). The `out=` variants and the list/pure-scalar overloads (`mul.left_t`, `mul.int`,
...) are not required.

- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous (transposed, sliced, expanded) and
  must not be modified; the result is a new tensor (any strides).
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The result dtype is PyTorch's
  promotion of the two operands: dimensioned tensors decide first, a 0-d tensor or a Python
  number only raises the category (bool -> int -> float), and a Python float meeting
  integer tensors gives float32, a Python int meeting bool tensors int64. Examples: float16
  * bfloat16 -> float32, bfloat16 * 0-d float32 -> bfloat16, int32 * 2.5 -> float32,
  bool * 3 -> int64, bool * bool -> bool (logical and).
- Precision: float16/bfloat16 are computed in float32 and rounded once. Integers wrap
  around on overflow.
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def mul_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"""

def mul_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::mul.Scalar(Tensor self, Scalar other) -> Tensor"""
'''


def _case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = "mul_Tensor" if isinstance(other, tuple) else "mul_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-bias-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _case("smoke-scalar-i32", "smoke", (3, 7), 5, "int32", seed=2),
    _case("gate-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("gate-f16", "check", (2, 1024, 1024), (2, 1024, 1024), "float16"),
    _case("scale-f32", "check", (1024, 3072), (3072,), "float32"),
    _case("column-f32", "check", (1823, 781), (1823, 1), "float32"),
    _case("outer-f32", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _case("mask-bool-f32", "check", (8, 1, 128, 128), (8, 12, 128, 128), "bool", "float32"),
    _case("t-other-bf16", "check", (300, 257), (300, 257), "bfloat16", other_layout="t"),
    _case("slice-f16", "check", (128, 513), (128, 513), "float16", layout="slice", other_layout="t"),
    _case("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _case("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _case("0d-times-vector", "check", (), (70001,), "float32"),
    _case("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
    _case("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _case("i8-wrap", "check", (64, 1000), (64, 1000), "int8"),
    _case("i16-i64", "check", (64, 1000), (1000,), "int16", "int64"),
    _case("bool-bool", "check", (100, 77), (100, 77), "bool"),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    _case("scalar-bf16-t", "check", (512, 1000), 0.125, "bfloat16", layout="t"),
    _case("scalar-int-f16", "check", (512, 1000), 3, "float16"),
    _case("scalar-float-i64", "check", (1000, 100), -1.5, "int64"),
    _case("scalar-int-bool", "check", (1000, 100), 3, "bool"),
    _case("scalar-i8", "check", (1000, 100), -7, "int8"),
    _case("mul-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("mul-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _case("scale-f16", "bench", (16384, 4096), (4096,), "float16"),
    _case("scalar-bf16-bench", "bench", (8192, 8192), 0.5, "bfloat16"),
]


def _rand(shape, dtype, gen):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 3).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)


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
    if isinstance(other, torch.Tensor) and other.ndim == 0 and self.dtype in (torch.float16, torch.bfloat16):
        other = other.to(self.dtype).to(other.dtype)  # representable in the common dtype
    return dict(self=self, other=other)


def mul_Tensor(self, other):
    return torch.ops.aten.mul.Tensor(self, other)


def mul_Scalar(self, other):
    return torch.ops.aten.mul.Scalar(self, other)


reference = {"mul_Tensor": mul_Tensor, "mul_Scalar": mul_Scalar}
