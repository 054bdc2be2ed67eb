"""Elementwise power: `aten::pow.Tensor_Tensor`, `pow.Tensor_Scalar` and `pow.Scalar`.

    out = self ** exponent

Required entry points: `pow_Tensor_Tensor` (both tensors), `pow_Tensor_Scalar` (exponent
is a Python number) and `pow_Scalar` (`self` is a Python number, exponent a tensor). The
`out=` variants and the pure-scalar overloads (`pow.int`, `pow.float`, ...) are not
required.

- Broadcasting: the operands broadcast against each other (NumPy rules); the result has
  the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64, and a bool base with a Python int
  exponent. The result dtype is PyTorch's promotion of the operands (dimensioned tensors
  decide, a 0-d tensor or a Python number only raises the category): int32 ** 0.5 ->
  float32, 2 ** int32 tensor -> int32, 2.5 ** int32 tensor -> float32, bool ** 2 -> int64.
- Floats follow C's `pow`: a negative base needs an integral exponent (the sign follows
  its parity), otherwise NaN (but (-inf) ** y is +-inf or +-0); x ** 0 = 1 and 1 ** y = 1
  even for NaN; 0 ** negative = inf; (+-1) ** +-inf = 1; |x| > 1 gives inf ** +inf and 0 **
  -inf, |x| < 1 the reverse. The result must be accurate to float32's published tolerance
  over the whole range (results here span many orders of magnitude), so exp2(y * log2(x))
  in plain float32 is not precise enough for float32 data. Float16/bfloat16 may be
  computed in float32 and rounded once. PyTorch special-cases scalar exponents 2, 3, 0.5, -0.5, -1 and -2 (as
  x*x, x*x*x, sqrt, rsqrt, 1/x, 1/(x*x)).
- Integers: exact repeated multiplication, wrapping around on overflow like C integers
  (2 ** 40 in int32 is 0). A negative integer exponent gives 1 for base 1, +-1 for base -1
  (by parity) and 0 otherwise; PyTorch refuses a negative Python-int exponent with integer
  tensors, so `pow_Tensor_Scalar` cases never do that.
- Scalars (the Python base or exponent) are only tested with values exactly
  representable in the common dtype. Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    """aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""

def pow_Tensor_Scalar(self: torch.Tensor, exponent: int | float) -> torch.Tensor:
    """aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor"""

def pow_Scalar(self: int | float, exponent: torch.Tensor) -> torch.Tensor:
    """aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor"""
'''


def _case(name, tag, base, exponent, dtype, exp_dtype=None, base_kind="pos", exp_range=(-4, 4),
          exp_int=False, layout=None, seed=0):
    """`base`/`exponent`: a shape, or a Python number (which picks the entry point). Bases:
    `pos` uniform in [0.25, 3], `any` N(0, 2^2), `small` (ints in [-5, 5]), `wide` (ints in
    [-100, 100]), `special` (0, +-1, +-2, +-0.5, +-inf, nan; the base and exponent
    shapes cross them). Exponents: uniform in `exp_range`, integral if `exp_int`. `layout`
    `t` makes the base a transposed view."""
    if not isinstance(base, tuple):
        entry = "pow_Scalar"
    else:
        entry = "pow_Tensor_Tensor" if isinstance(exponent, tuple) else "pow_Tensor_Scalar"
    params = dict(base=base, exponent=exponent, dtype=dtype, exp_dtype=exp_dtype or dtype,
                  base_kind=base_kind, exp_range=exp_range, exp_int=exp_int, layout=layout)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-tt-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-ts-f16-square", "smoke", (9, 6), 2, "float16", base_kind="any", layout="t", seed=1),
    _case("smoke-s-i32", "smoke", 2, (3, 7), "int32", exp_range=(0, 40), exp_int=True, seed=2),
    _case("tt-f32", "check", (1000, 1000), (1000, 1000), "float32", exp_range=(-12, 12)),
    _case("tt-f32-neg-base", "check", (1000, 1000), (1000, 1000), "float32", base_kind="any",
          exp_range=(-5, 5), exp_int=True),
    _case("tt-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("tt-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _case("tt-f16-neg-base", "check", (1000, 130), (130,), "float16", base_kind="any", exp_int=True),
    _case("tt-f32-t", "check", (300, 257), (257,), "float32", layout="t"),
    _case("tt-f32-0d", "check", (1000, 33), (), "float32"),
    _case("tt-i32-f32", "check", (300, 300), (300, 300), "int32", "float32", base_kind="small"),
    _case("tt-special-f32", "check", (10, 1), (1, 10), "float32", base_kind="special"),
    _case("tt-special-f16", "check", (10, 1), (1, 10), "float16", base_kind="special"),
    _case("tt-i64", "check", (1000, 1000), (1000, 1000), "int64", base_kind="small",
          exp_range=(-3, 20), exp_int=True),
    _case("tt-i32-wrap", "check", (1000, 1000), (1000,), "int32", base_kind="wide",
          exp_range=(0, 20), exp_int=True),
    _case("tt-i8", "check", (64, 1000), (64, 1000), "int8", base_kind="small", exp_range=(0, 8), exp_int=True),
    _case("ts-f32-square", "check", (1000, 1000), 2, "float32", base_kind="any"),
    _case("ts-f32-cube", "check", (1000, 1000), 3.0, "float32", base_kind="any"),
    _case("ts-f32-sqrt", "check", (1000, 1000), 0.5, "float32", base_kind="any"),
    _case("ts-f32-rsqrt", "check", (1000, 1000), -0.5, "float32"),
    _case("ts-f32-recip", "check", (1000, 1000), -1, "float32", base_kind="any"),
    _case("ts-f32-recip-sq", "check", (1000, 1000), -2.0, "float32", base_kind="any"),
    _case("ts-f32-general", "check", (1000, 1000), 1.5, "float32"),
    _case("ts-f32-neg-general", "check", (1000, 1000), -2.75, "float32", base_kind="any"),
    _case("ts-bf16-cube-t", "check", (512, 1000), 3, "bfloat16", base_kind="any", layout="t"),
    _case("ts-f16-sqrt", "check", (512, 1000), 0.5, "float16"),
    _case("ts-i64-cube", "check", (1000, 100), 3, "int64", base_kind="wide"),
    _case("ts-i32-zero", "check", (1000, 100), 0, "int32", base_kind="wide"),
    _case("ts-i32-half", "check", (1000, 100), 0.5, "int32", base_kind="wide"),
    _case("ts-bool-square", "check", (100, 77), 2, "bool"),
    _case("s-f32", "check", 2.0, (1000, 1000), "float32", exp_range=(-20, 20)),
    _case("s-f32-half", "check", 0.5, (1000, 1000), "float32", exp_range=(-20, 20)),
    _case("s-bf16", "check", 2.5, (512, 1000), "bfloat16", exp_range=(-6, 6)),
    _case("s-i64", "check", 3, (1000, 100), "int64", exp_range=(0, 30), exp_int=True),
    _case("s-float-i32", "check", 2.5, (1000, 100), "int32", exp_range=(0, 10), exp_int=True),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("zero-dim-scalar", "check", (), 3, "int64", base_kind="small"),
    _case("square-f32", "bench", (8192, 8192), 2, "float32", base_kind="any"),
    _case("sqrt-bf16", "bench", (16, 2048, 4096), 0.5, "bfloat16"),
    _case("general-f32", "bench", (8192, 8192), 1.5, "float32"),
    _case("tt-f32-bench", "bench", (8192, 8192), (8192, 8192), "float32"),
]

_SPECIAL = [0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, float("inf"), float("-inf"), float("nan")]


def _base(shape, dtype, kind, gen):
    if kind == "special":
        return torch.tensor(_SPECIAL).reshape(shape).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if kind in ("small", "wide"):
        lim = 5 if kind == "small" else 100
        return torch.randint(-lim, lim + 1, shape, generator=gen).to(dtype)
    if kind == "any":
        return (torch.randn(shape, generator=gen) * 2).to(dtype)
    return (torch.rand(shape, generator=gen) * 2.75 + 0.25).to(dtype)


def _exponent(shape, dtype, p, gen):
    if p["base_kind"] == "special":
        return torch.tensor(_SPECIAL).reshape(shape).to(dtype)
    lo, hi = p["exp_range"]
    if p["exp_int"] or not dtype.is_floating_point:
        return torch.randint(lo, hi + 1, shape, generator=gen).to(dtype)
    return (torch.rand(shape, generator=gen) * (hi - lo) + lo).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, exp_dtype = getattr(torch, p["dtype"]), getattr(torch, p["exp_dtype"])
    base, exponent = p["base"], p["exponent"]
    if isinstance(base, tuple):
        full = base[::-1] if p["layout"] == "t" else base
        base = _base(full, dtype, p["base_kind"], gen).to(device)
        base = base.t() if p["layout"] == "t" else base
    if isinstance(exponent, tuple):
        exponent = _exponent(exponent, exp_dtype, p, gen).to(device)
    return dict(self=base, exponent=exponent)


def pow_Tensor_Tensor(self, exponent):
    return torch.ops.aten.pow.Tensor_Tensor(self, exponent)


def pow_Tensor_Scalar(self, exponent):
    return torch.ops.aten.pow.Tensor_Scalar(self, exponent)


def pow_Scalar(self, exponent):
    return torch.ops.aten.pow.Scalar(self, exponent)


reference = {
    "pow_Tensor_Tensor": pow_Tensor_Tensor,
    "pow_Tensor_Scalar": pow_Tensor_Scalar,
    "pow_Scalar": pow_Scalar,
}
