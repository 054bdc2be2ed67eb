"""The members of the unary family (kgb/aten_families/unary.py), one table entry each: the
input distributions and special values, the signature and reference, and the elementwise
function of the solution. Their cases are in unary_cases.py (not here: the specs'
make_inputs reads this table in processes that must not hold the hidden cases), their task
texts in unary_text.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import torch

from kgb.aten_families.source import IMPORTS
from kgb.aten_families.unary_draws import (
    Draw,
    acosh_domain,
    acosh_wide,
    asin_near_one,
    decades,
    edge,
    entr_values,
    ints,
    logit_probs,
    lognormal,
    normal,
    polygamma_negative,
    sgn_values,
    softmax_rows,
    symmetric,
    whole_range,
)

INF, NAN = float("inf"), float("nan")


@dataclass(frozen=True)
class Unary:
    """One member. `draws` maps a case's `dist` to its input generator; `pick` chooses the
    key from the case's params where more than `dist` decides it. `args` are the entry
    point's arguments in order: `self` is the drawn tensor, the others come from the
    case's params. The solution: `kernels` are kernel files pasted after kernels/unary.py
    (helpers, or `_<name>(x)` itself); with `own_entry` the last of them defines the entry
    point and the family's float template is not used; a member's `_<name>(x)` written
    inline is unary_solutions.MATH's."""

    name: str
    draws: Mapping[str, Draw]
    kernels: tuple[str, ...] = ()
    own_entry: bool = False
    args: tuple[str, ...] = ("self",)
    pick: Callable[[Mapping], str] = lambda params: params["dist"]
    signature: str = '''\
def {name}(self: torch.Tensor) -> torch.Tensor:
    """aten::{name}(Tensor self) -> Tensor"""
'''
    reference: str = "reference = torch.ops.aten.{name}.default\n"
    imports: str = IMPORTS


# polygamma's special values for every n: tiny and huge arguments, the digamma root near
# 1.4616, half-integers of both signs
POLYGAMMA_EDGE = [1e-30, 1e-4, 0.5, 1.0, 1.4616321, 2.0, 9.99, 10.0, 10.01, 1e4, 1e30,
                  -0.5, -1.5, -2.25, -3.75]


def _activation(name, scale, values):
    """hardsigmoid, mish, silu: floating inputs only."""
    return Unary(name, {"normal": normal(scale), "edge": edge(values)})


def _exact(name, values, **draws):
    """floor, neg, sgn, square: the result keeps the dtype; integers over their whole range,
    or small values."""
    draws = {"edge": edge(values), "int": whole_range, "small": ints(-100, 101), **draws}
    return Unary(name, draws, kernels=(f"unary_{name}",), own_entry=True)


OPS = [
    Unary(
        "acosh",
        {"domain": acosh_domain, "wide": acosh_wide, "int": ints(-50, 200),
         # the boundary x = 1, values just above it, huge values, and the NaN domain
         "edge": edge([1.0, 1.0000001, 1.001, 1.5, 2.0, 10.0, 1e4, 1.5e4, 1e20, 3e38, INF,
                       0.999, 0.0, -1.0, -5.0, -INF, NAN])},
        kernels=("unary_acosh",),
    ),
    Unary(
        "asin",
        # uniform on [-1.02, 1.02]: about 2% outside the domain (NaN results); integers mostly
        # -1, 0, 1, some 2 (NaN)
        {"domain": symmetric(1.02), "near_one": asin_near_one, "int": ints(-1, 3, u8_low=-1),
         # the ends of the domain, the neighbourhood of 0.5 (where a typical implementation
         # switches formulas), tiny values, and the NaN domain
         "edge": edge([0.0, -0.0, 1e-30, -1e-20, 1e-4, 0.4999, 0.5, 0.5001, -0.5, 0.9, 0.99999, 1.0,
                       -1.0, 1.0000001, -2.0, INF, -INF, NAN])},
        kernels=("unary_asin",),
    ),
    Unary(
        "bitwise_not",
        {"int": whole_range, "small": ints(-100, 101)},
        kernels=("unary_bitwise_not",), own_entry=True,
    ),
    Unary(
        "cosh",
        # large: results up to 1.6e38
        {"normal": normal(3), "large": symmetric(88.7), "int": ints(-88, 89, u8_low=-88),
         # 0, large arguments on both sides of the float32 overflow band (88.72 to 89.416,
         # left out because PyTorch's kernels disagree there), infinities and NaN
         "edge": edge([0.0, -0.0, 1e-20, 1.0, -1.0, 10.0, -20.5, 80.0, -85.0, 88.5, -88.7, 89.5, -90.0,
                       200.0, INF, -INF, NAN])},
        kernels=("unary_exp",),
    ),
    Unary(
        "erfc",
        # tail: uniform on [-1, 9], the right tail down to 4e-37
        {"normal": normal(1.5), "int": ints(-5, 6),
         "tail": lambda shape, dtype, gen: (torch.rand(shape, generator=gen) * 10 - 1).to(dtype),
         # both tails, zero, the neighbourhood of 0.5, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-20, 0.4999, 0.5, 0.5001, -0.5, 1.0, -1.0, 2.5, 4.0, -4.0, 9.0, 10.5,
                       30.0, -30.0, INF, -INF, NAN])},
        kernels=("unary_erfc",),
    ),
    _exact("floor", normal=normal(100),
           # halves and integers of both signs, signed zeros, values beyond 2**23 (no fraction
           # in float32), infinities and NaN
           values=[0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 0.999999, -1e-20, 8388607.5, -8388607.5,
                   16777217.0, 1e30, -1e30, INF, -INF, NAN]),
    _activation("hardsigmoid", 3, [0.0, -0.0, -3.0, 3.0, -3.0001, 3.0001, -2.9999, 2.9999, 1.5, -1.5, 100.0,
                                   -100.0, INF, -INF, NAN]),
    Unary(
        "i0",
        {"normal": normal(4), "large": symmetric(88.7), "int": ints(-88, 89),
         # zero, both signs, the neighbourhood of typical switch points (8, 10, 12), large
         # arguments just below the float32 overflow band and beyond it, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-20, 1.0, -3.75, 7.99, 8.0, 9.99, -10.0, 10.01, 12.0, -30.0, 50.0,
                       88.5, -88.7, 92.0, 1e30, INF, -INF, NAN])},
        kernels=("unary_exp", "unary_i0"),
    ),
    Unary(
        "log10",
        {"normal": lognormal(3), "wide": decades, "int": ints(-3, 1_000_000, u8_high=256),
         # zeros, powers of ten, values near 1, the float32 extremes, the NaN domain and
         # infinities
         "edge": edge([0.0, -0.0, 1.0, 10.0, 100.0, 0.001, 0.999999, 1.000001, 1.5e-38, 3.4e38, 2.0,
                       -1.0, -1e-10, INF, -INF, NAN])},
    ),
    Unary(
        "logit",
        # integers -1, 0, 1 or 2
        {"probs": logit_probs, "int": ints(-1, 3, u8_low=-1),
         # the ends 0 and 1, points just inside and outside [0, 1], 0.5 (logit 0), infinities
         # and NaN
         "edge": edge([0.0, -0.0, 1.0, 0.5, 1e-30, 1e-7, 0.9999999, 0.25, 0.75, -0.01, 1.01, 2.0, INF, -INF,
                       NAN])},
        kernels=("unary_logit",), own_entry=True, args=("self", "eps"),
        signature='''\
def logit(self: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    """aten::logit(Tensor self, float? eps=None) -> Tensor"""
''',
        reference="""\
def reference(self, eps=None):
    # The ATen op, run in float32 for float16/bfloat16 inputs and rounded once. That is
    # exactly what PyTorch's CUDA kernel does; its CPU kernel instead rounds every step to
    # half precision (logit(0.498) in bfloat16 comes out -0.0039 instead of -0.0078), which
    # would make the CPU reference disagree with the task text.
    if self.dtype in (torch.float16, torch.bfloat16):
        return torch.ops.aten.logit.default(self.float(), eps).to(self.dtype)
    return torch.ops.aten.logit.default(self, eps)
""",
    ),
    _activation("mish", 4, [0.0, -0.0, 1e-20, 1.0, -1.0, 5.0, -5.0, 19.9, 20.1, -20.0, 44.0, 88.0, 89.0, -88.0,
                            -100.0, 100.0, INF, -INF, NAN]),
    _exact("neg", normal=normal(10),
           # signed zeros, the float extremes, subnormals, infinities and NaN
           values=[0.0, -0.0, 1.0, -2.5, 3.4e38, -3.4e38, 1e-40, -1e-45, 65504.0, INF, -INF, NAN]),
    Unary(
        "polygamma",
        # positive: from about 0.05 to 20 and beyond (concentration parameters and the like).
        # Digamma has poles at 0 and the negative integers: its integers start at -2 and its
        # special values add the poles, infinities and NaN (values not tested for n >= 1).
        {"positive": lognormal(1.2), "negative": polygamma_negative,
         "int": ints(1, 100, u8_low=1), "int-digamma": ints(-2, 100, u8_low=-2),
         "edge": edge(POLYGAMMA_EDGE),
         "edge-digamma": edge(POLYGAMMA_EDGE + [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN])},
        pick=lambda p: p["dist"] + ("-digamma" if p["n"] == 0 and p["dist"] in ("edge", "int") else ""),
        kernels=("unary_polygamma",), own_entry=True, args=("n", "self"), imports="import math\n\n" + IMPORTS,
        signature='''\
def polygamma(n: int, self: torch.Tensor) -> torch.Tensor:
    """aten::polygamma(int n, Tensor self) -> Tensor"""
''',
        reference="""\
def reference(n, self):
    return torch.ops.aten.polygamma.default(n, self)
""",
    ),
    Unary(
        "rsqrt",
        # positive variances and the like, over a few decades
        {"normal": lognormal(2), "wide": decades, "int": ints(-3, 1_000_000, u8_high=256),
         # signed zeros, the float32 extremes, the NaN domain and infinities
         "edge": edge([0.0, -0.0, 1.0, 4.0, 0.25, 1e-37, 3.4e38, 2.0, 1e-6, 65504.0, -1.0, -1e-10, INF,
                       -INF, NAN])},
    ),
    _exact("sgn", normal=sgn_values, scaled=partial(sgn_values, scaled=True),
           # signed zeros, tiny and huge values, infinities and NaN
           values=[0.0, -0.0, 1e-30, -1e-30, 1.0, -2.5, 3.4e38, -3.4e38, INF, -INF, NAN]),
    _activation("silu", 4, [0.0, -0.0, 1e-20, 1.0, -1.0, 5.0, -5.0, 20.0, -20.0, 88.0, -88.0, -89.0, -100.0,
                            100.0, INF, -INF, NAN]),
    Unary(
        "special_entr",
        {"normal": entr_values, "probs": softmax_rows, "int": ints(-3, 1000),
         # signed zeros, tiny and huge values, 1 (entropy 0), negatives, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-30, 1e-5, 0.36787944, 1.0, 2.0, 1e30, -1e-30, -1.0, INF, -INF, NAN])},
    ),
    _exact("square", normal=normal(10),
           # signed zeros, values whose square overflows or underflows, infinities and NaN
           values=[0.0, -0.0, 1.0, -2.5, 1e19, -1.9e19, 1e-30, 255.9, -300.0, 65504.0, INF, -INF, NAN]),
]
