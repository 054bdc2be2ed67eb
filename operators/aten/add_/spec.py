"""In-place scaled addition: `aten::add_.Tensor` and `aten::add_.Scalar`.

    self <- self + alpha * other        (then `self` itself is returned)

Required entry points: `add__Tensor` (other is a tensor) and `add__Scalar` (other is a
Python number). The list overload `add_.t` is not required.

- In place: the result is written into `self`'s own memory, through its strides (it may be
  a transposed or sliced view), and the function returns that same tensor object (or a
  tensor with the same storage, offset, shape and strides). `self` keeps its shape and dtype.
- Broadcasting: `other` broadcasts to `self`'s shape (it may have fewer dimensions, size-1
  dimensions, or be 0-d); `self` itself is never broadcast. `other` may be non-contiguous.
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The arithmetic happens in the
  common dtype of `self` and `other` under PyTorch's promotion rules (a 0-d tensor or a
  Python number only raises the category, e.g. a float32 0-d tensor added to a bfloat16
  tensor computes in bfloat16), and the result is cast to `self`'s dtype. Float16 and
  bfloat16 are computed in float32 and rounded once; `alpha` is kept in the compute
  precision (float32 for half types). Integers wrap around on overflow (int8: 100 + 100 =
  -56). For bool, `+` is logical or and `alpha` multiplies as a bool.
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Cases never need a promotion that PyTorch refuses (a float result into an integer
  `self`). Empty and 0-d tensors are valid.
"""

import torch

from kgb.aten_families.results import in_place_compare
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def add__Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha: int | float | bool = 1) -> torch.Tensor:
    """aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"""

def add__Scalar(self: torch.Tensor, other: int | float | bool, alpha: int | float | bool = 1) -> torch.Tensor:
    """aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)


def _case(name, tag, shape, other, dtype, other_dtype=None, alpha=1, layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). `layout`: `t` makes
    `self` a transposed view, `slice` a view of every other column."""
    entry = "add__Tensor" if isinstance(other, tuple) else "add__Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  alpha=alpha, layout=layout)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-bias-f32", "smoke", (5, 37), (37,), "float32", alpha=2),
    _case("smoke-t-f16-f32", "smoke", (9, 6), (9, 6), "float16", "float32", layout="t", seed=1),
    _case("smoke-scalar-i32", "smoke", (3, 7), 5, "int32", alpha=3, seed=2),
    _case("resid-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("resid-f16-alpha", "check", (2, 1024, 1024), (2, 1024, 1024), "float16", alpha=0.5),
    _case("bias-f32", "check", (1024, 3072), (3072,), "float32"),
    _case("column-f32", "check", (1823, 781), (1823, 1), "float32", alpha=-1.5),
    _case("mixed-f16-f32", "check", (300, 257), (257,), "float16", "float32"),
    _case("self-t-f32", "check", (257, 300), (257, 300), "float32", layout="t"),
    _case("self-slice-bf16", "check", (128, 513), (128, 513), "bfloat16", layout="slice"),
    _case("other-0d-bf16", "check", (1000, 33), (), "bfloat16", "float32"),
    _case("bcast-3d-f32", "check", (2, 3, 5), (2, 1, 5), "float32"),
    _case("vector-f32", "check", (70001,), (70001,), "float32", alpha=3),
    _case("i64-alpha", "check", (1000, 1000), (1000, 1000), "int64", alpha=-3),
    _case("i8-wrap", "check", (64, 1000), (64, 1000), "int8"),
    _case("i32-i64", "check", (100, 100), (100,), "int32", "int64", alpha=7),
    _case("bool", "check", (100, 77), (100, 77), "bool"),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32", alpha=2),
    _case("scalar-f32", "check", (1000, 1000), 2.5, "float32", alpha=-1.5),
    _case("scalar-bf16", "check", (512, 1000), 0.125, "bfloat16", alpha=2, layout="t"),
    _case("scalar-int-f16", "check", (512, 1000), 3, "float16"),
    _case("scalar-i64", "check", (1000, 1000), 7, "int64", alpha=-2),
    _case("scalar-bool", "check", (100, 77), True, "bool"),
    _case("add-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("add-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _case("bias-f16", "bench", (16384, 4096), (4096,), "float16"),
    _case("scalar-f32-bench", "bench", (8192, 8192), 1.0, "float32", alpha=0.5),
]


def _rand(shape, dtype, gen):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 3).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, shape = getattr(torch, p["dtype"]), p["shape"]
    if p["layout"] == "t":
        self = _rand(shape[::-1], dtype, gen).to(device).t()
    elif p["layout"] == "slice":
        self = _rand((*shape[:-1], 2 * shape[-1]), dtype, gen).to(device)[..., ::2]
    else:
        self = _rand(shape, dtype, gen).to(device)
    other = p["other"]
    if isinstance(other, tuple):
        other = _rand(other, getattr(torch, p["other_dtype"]), gen).to(device)
        if other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
            other = other.to(dtype).to(other.dtype)  # representable in the common dtype
    return dict(self=self, other=other, alpha=p["alpha"])


def add__Tensor(self, other, *, alpha=1):
    return torch.ops.aten.add_.Tensor(self, other, alpha=alpha)


def add__Scalar(self, other, alpha=1):
    return torch.ops.aten.add_.Scalar(self, other, alpha)


reference = {"add__Tensor": add__Tensor, "add__Scalar": add__Scalar}


compare = in_place_compare("add_")
