"""Elementwise division: `aten::div.Tensor`, `div.Scalar`, `div.Tensor_mode`, `div.Scalar_mode`.

    out = self / other                          (rounding_mode None: true division)
    out = trunc(self / other)                   (rounding_mode "trunc")
    out = floor(self / other)                   (rounding_mode "floor")

Required entry points: `div_Tensor`, `div_Scalar`, `div_Tensor_mode`, `div_Scalar_mode`
(the `_Scalar` ones take a Python number as `other`). The `out=` variants and pure-scalar
overloads (`div.int`, `div.float`, ...) are not required.

- Broadcasting: `self` and `other` broadcast against each other; the result has the
  broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The operands are first
  promoted to their common dtype (PyTorch rules: dimensioned tensors decide, a 0-d tensor or
  a Python number only raises the category). True division of integer or bool operands
  gives float32; with "trunc" or "floor" the result keeps the common dtype (integer
  division for integers; bool is not allowed there).
- Float semantics (IEEE): true division is correctly rounded (float16/bfloat16 computed in
  float32, rounded once). "trunc" truncates the quotient after it has been rounded to the
  common dtype (for half types: computed in float32, rounded to float16/bfloat16, then
  truncated, so 8.9999 rounds to 9 first). "floor" follows Python's `//`: the exact floor
  of the mathematical quotient, computed as PyTorch does from a - fmod(a, b), so 1.0 // 0.1
  is 9 (0.1 is slightly above 1/10) and a finite a floor-divided by +-inf gives 0 or -1 by
  sign; division by zero gives a / 0 (inf or nan), and inf or nan in `self` gives nan.
- Integer semantics: "trunc" rounds toward zero, "floor" toward minus infinity. Cases
  never divide an integer by zero or overflow (int_min / -1).
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
  PyTorch on CUDA divides by a Python scalar by multiplying with its reciprocal, which can
  move a "trunc" result across an integer, so "trunc" cases use powers of two there.
- Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def div_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::div.Tensor(Tensor self, Tensor other) -> Tensor"""

def div_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::div.Scalar(Tensor self, Scalar other) -> Tensor"""

def div_Tensor_mode(self: torch.Tensor, other: torch.Tensor, *, rounding_mode: str | None) -> torch.Tensor:
    """aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"""

def div_Scalar_mode(self: torch.Tensor, other: int | float | bool, *, rounding_mode: str | None) -> torch.Tensor:
    """aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor"""
'''

_NO_MODE = "-"  # the plain overloads, which take no rounding_mode


def _case(name, tag, shape, other, dtype, other_dtype=None, mode=_NO_MODE, layout=None,
          other_layout=None, divisor="any", seed=0):
    """`other`: a shape (Tensor entries) or a Python number (Scalar entries). `divisor`: `any`
    (normal floats, nonzero ints), `away` (|other| in [0.25, 4], for rounded quotients) or
    `special` (self and other are the 8 values 0, +-1, +-2.5, +-inf, nan, crossed)."""
    kind = "Tensor" if isinstance(other, tuple) else "Scalar"
    entry = f"div_{kind}" + ("" if mode == _NO_MODE else "_mode")
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype, mode=mode,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-floor-special", "smoke", (8, 1), (1, 8), "float32", mode="floor", divisor="special"),
    _case("smoke-trunc-i32", "smoke", (3, 7), -3, "int32", mode="trunc", seed=1),
    _case("true-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("true-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _case("true-f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _case("true-f32-t", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    _case("true-i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _case("true-i32-0d-f32", "check", (300, 300), (), "int32", "float32"),
    _case("true-bool", "check", (100, 77), (100, 77), "bool"),
    _case("true-special", "check", (8, 1), (1, 8), "float32", divisor="special"),
    _case("none-mode-f16", "check", (512, 1000), (512, 1000), "float16", mode=None),
    _case("trunc-f16", "check", (1000, 513), (513,), "float16", mode="trunc", divisor="away"),
    _case("trunc-bf16-t", "check", (513, 1000), (513, 1000), "bfloat16", mode="trunc", divisor="away", layout="t"),
    _case("trunc-f32", "check", (1000, 1000), (1000, 1000), "float32", mode="trunc", divisor="away"),
    _case("trunc-i64", "check", (1000, 1000), (1000,), "int64", mode="trunc"),
    _case("trunc-i8", "check", (64, 1000), (64, 1000), "int8", mode="trunc"),
    _case("trunc-special", "check", (8, 1), (1, 8), "float32", mode="trunc", divisor="special"),
    _case("floor-f32-column", "check", (1823, 781), (1823, 1), "float32", mode="floor", divisor="away"),
    _case("floor-f16", "check", (1000, 513), (1000, 513), "float16", mode="floor", divisor="away"),
    _case("floor-bf16-t", "check", (513, 1000), (1000,), "bfloat16", mode="floor", divisor="away", layout="t"),
    _case("floor-i32", "check", (1000, 1000), (1000, 1000), "int32", mode="floor"),
    _case("floor-i16-i64", "check", (64, 1000), (1000,), "int16", "int64", mode="floor"),
    _case("floor-special-f16", "check", (8, 1), (1, 8), "float16", mode="floor", divisor="special"),
    _case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    _case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    _case("scalar-i64", "check", (1000, 100), 2, "int64"),
    _case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    _case("scalar-floor-tenth", "check", (1000, 1000), 0.1, "float32", mode="floor"),
    _case("scalar-floor-i64", "check", (1000, 1000), -7, "int64", mode="floor"),
    _case("scalar-trunc-f16", "check", (1000, 1000), -0.25, "float16", mode="trunc"),
    _case("scalar-none-mode", "check", (1000, 100), 4, "int32", mode=None),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("zero-dim-floor", "check", (), (), "int64", mode="floor"),
    _case("div-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("attn-scale-bf16", "bench", (16, 2048, 4096), 8.0, "bfloat16"),
    _case("floor-i64", "bench", (8192, 8192), (8192,), "int64", mode="floor"),
    _case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32", mode="floor", divisor="away"),
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
    inputs = dict(self=self, other=other)
    if p["mode"] != _NO_MODE:
        inputs["rounding_mode"] = p["mode"]
    return inputs


def div_Tensor(self, other):
    return torch.ops.aten.div.Tensor(self, other)


def div_Scalar(self, other):
    return torch.ops.aten.div.Scalar(self, other)


def div_Tensor_mode(self, other, *, rounding_mode):
    return torch.ops.aten.div.Tensor_mode(self, other, rounding_mode=rounding_mode)


def div_Scalar_mode(self, other, *, rounding_mode):
    return torch.ops.aten.div.Scalar_mode(self, other, rounding_mode=rounding_mode)


reference = {
    "div_Tensor": div_Tensor,
    "div_Scalar": div_Scalar,
    "div_Tensor_mode": div_Tensor_mode,
    "div_Scalar_mode": div_Scalar_mode,
}
