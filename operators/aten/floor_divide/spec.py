"""Floor division: `aten::floor_divide` and `aten::floor_divide.Scalar`.

    out = floor(self / other)        (Python's `//`, same as div with rounding_mode="floor")

Required entry points: `floor_divide` (other is a tensor) and `floor_divide_Scalar` (other
is a Python number). The `out=` variants are not required.

- Broadcasting: `self` and `other` broadcast against each other; the result has the
  broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32 and int8..int64 (bool is refused by PyTorch). The
  result has the common dtype of the operands under PyTorch's promotion (dimensioned
  tensors decide, a 0-d tensor or a Python number only raises the category), e.g. int32 //
  2.5 -> float32, int16 // int64 -> int64, bfloat16 // 0-d float32 -> bfloat16.
- Float semantics: the exact floor of the mathematical quotient, computed as PyTorch does
  from a - fmod(a, b) (half types in float32, rounded once), so 1.0 // 0.1 is 9 (0.1 is
  slightly above 1/10) and a finite a floor-divided by +-inf gives 0 or -1 by sign; division
  by zero gives a / 0 (inf or nan), and inf or nan in `self` gives nan.
- Integer semantics: rounding toward minus infinity (-7 // 2 = -4). Cases never divide an
  integer by zero or overflow (int_min // -1).
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def floor_divide(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::floor_divide(Tensor self, Tensor other) -> Tensor"""

def floor_divide_Scalar(self: torch.Tensor, other: int | float) -> torch.Tensor:
    """aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor"""
'''

def _case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None,
          divisor="away", seed=0):
    """`other`: a shape (Tensor entries) or a Python number (Scalar entries). `divisor`: `any`
    (normal floats, nonzero ints), `away` (|other| in [0.25, 4], for rounded quotients) or
    `special` (self and other are the 8 values 0, +-1, +-2.5, +-inf, nan, crossed)."""
    entry = "floor_divide" if isinstance(other, tuple) else "floor_divide_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-special", "smoke", (8, 1), (1, 8), "float32", divisor="special"),
    _case("smoke-scalar-i32", "smoke", (3, 7), -3, "int32", seed=1),
    _case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _case("f32-any", "check", (1000, 1000), (1000, 1000), "float32", divisor="any"),
    _case("f16", "check", (1000, 513), (1000, 513), "float16"),
    _case("bf16-t", "check", (513, 1000), (1000,), "bfloat16", layout="t"),
    _case("f32-slice-t", "check", (300, 257), (300, 257), "float32", layout="slice", other_layout="t"),
    _case("bf16-by-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _case("f16-by-f32", "check", (300, 257), (257,), "float16", "float32"),
    _case("i32-by-f32", "check", (300, 300), (300,), "int32", "float32"),
    _case("i64", "check", (1000, 1000), (1000, 1000), "int64", divisor="any"),
    _case("i32", "check", (1000, 1000), (1000,), "int32", divisor="any"),
    _case("i16-by-i64", "check", (64, 1000), (1000,), "int16", "int64", divisor="any"),
    _case("i8", "check", (64, 1000), (64, 1000), "int8", divisor="any"),
    _case("special-f16", "check", (8, 1), (1, 8), "float16", divisor="special"),
    _case("special-bf16", "check", (8, 1), (1, 8), "bfloat16", divisor="special"),
    _case("scalar-tenth", "check", (1000, 1000), 0.1, "float32"),
    _case("scalar-f16", "check", (1000, 1000), -0.75, "float16"),
    _case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    _case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    _case("scalar-i64", "check", (1000, 1000), -7, "int64"),
    _case("scalar-float-i64", "check", (1000, 100), 2.5, "int64"),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("zero-dim-i64", "check", (), (), "int64", divisor="any"),
    _case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("floor-i64", "bench", (8192, 8192), (8192,), "int64", divisor="any"),
    _case("scalar-i32-bench", "bench", (16384, 8192), 7, "int32"),
    _case("floor-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
]

_SPECIAL = [0.0, 1.0, -1.0, 2.5, -2.5, float("inf"), float("-inf"), float("nan")]


def _rand(shape, dtype, gen, divisor="numerator"):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        if divisor == "numerator":
            return torch.randint(max(info.min + 1, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return (torch.randint(1, 20, shape, generator=gen) * sign).to(dtype)
    if divisor == "away":
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return ((torch.rand(shape, generator=gen) * 3.75 + 0.25) * sign).to(dtype)
    return (torch.randn(shape, generator=gen) * (8 if divisor == "numerator" else 1)).to(dtype)


def _tensor(shape, dtype, layout, gen, device, divisor="numerator"):
    if layout == "t":
        return _rand(shape[::-1], dtype, gen, divisor).to(device).t()
    if layout == "slice":
        return _rand((*shape[:-1], 2 * shape[-1]), dtype, gen, divisor).to(device)[..., ::2]
    return _rand(shape, dtype, gen, divisor).to(device)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    if p["divisor"] == "special":
        values = torch.tensor(_SPECIAL)
        self = values.reshape(p["shape"]).to(dtype).to(device)
        other = values.reshape(p["other"]).to(other_dtype).to(device)
    else:
        self = _tensor(p["shape"], dtype, p["layout"], gen, device)
        other = p["other"]
        if isinstance(other, tuple):
            other = _tensor(other, other_dtype, p["other_layout"], gen, device, p["divisor"])
            if other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
                other = other.to(dtype).to(other_dtype)  # representable in the common dtype
    return dict(self=self, other=other)


def floor_divide(self, other):
    return torch.ops.aten.floor_divide.default(self, other)


def floor_divide_Scalar(self, other):
    return torch.ops.aten.floor_divide.Scalar(self, other)


reference = {"floor_divide": floor_divide, "floor_divide_Scalar": floor_divide_Scalar}
