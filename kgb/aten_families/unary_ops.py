"""The members of the unary family (kgb/aten_families/unary.py), one table entry each: the
input distributions and special values, the cases, and the elementwise function of the
solution. Their task texts are in unary_text.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import torch

from kgb.aten_families.source import IMPORTS
from kgb.aten_families.unary_cases import (
    Draw,
    acosh_domain,
    acosh_wide,
    asin_near_one,
    bench_cases,
    case_maker,
    decades,
    edge,
    entr_values,
    exact_int_cases,
    float_cases,
    float_member_cases,
    ints,
    logit_probs,
    lognormal,
    normal,
    polygamma_negative,
    promoted_int_cases,
    sgn_values,
    softmax_rows,
    symmetric,
    whole_range,
)
from kgb.operators import Case

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
    cases: list[Case]
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


normal_case = case_maker()
domain_case = case_maker("domain")  # acosh and asin call their main distribution "domain"
int_case = case_maker("int")
logit_case = case_maker("probs", eps=None)
poly_case = case_maker("positive", n=0)
F32, PLAIN, POS = "float32", "contiguous", "positive"  # polygamma's common columns
# polygamma's special values for every n: tiny and huge arguments, the digamma root near
# 1.4616, half-integers of both signs
POLYGAMMA_EDGE = [1e-30, 1e-4, 0.5, 1.0, 1.4616321, 2.0, 9.99, 10.0, 10.01, 1e4, 1e30,
                  -0.5, -1.5, -2.25, -3.75]


def _activation(name, scale, values):
    """hardsigmoid, mish, silu: floating inputs only, MLP-sized cases."""
    cases = float_member_cases(normal_case, "bfloat16", edge=("float16",),
                               f16=("f16-mlp", [512, 3073]), strided="bfloat16")
    return Unary(name, cases, {"normal": normal(scale), "edge": edge(values)})


def _exact(name, smoke, values, extra=(), bench=(), **draws):
    """floor, neg, sgn, square: the result keeps the dtype, every integer dtype is a case
    (over its whole range, or small values)."""
    case = normal_case
    cases = [case("smoke-f32", "smoke", [7, 33]), *smoke, *float_cases(case),
             *exact_int_cases(case), *extra, *bench_cases(case), *bench]
    draws = {"edge": edge(values), "int": whole_range, "small": ints(-100, 101), **draws}
    return Unary(name, cases, draws, kernels=(f"unary_{name}",), own_entry=True)


OPS = [
    Unary(
        "acosh",
        float_member_cases(domain_case, "float16", ints=promoted_int_cases(domain_case),
                           special=[domain_case("wide-range-f32", "check", [65537], dist="wide")]),
        {"domain": acosh_domain, "wide": acosh_wide, "int": ints(-50, 200),
         # the boundary x = 1, values just above it, huge values, and the NaN domain
         "edge": edge([1.0, 1.0000001, 1.001, 1.5, 2.0, 10.0, 1e4, 1.5e4, 1e20, 3e38, INF,
                       0.999, 0.0, -1.0, -5.0, -INF, NAN])},
        kernels=("unary_acosh",),
    ),
    Unary(
        "asin",
        float_member_cases(domain_case, "bfloat16", edge=("float16",),
                           ints=promoted_int_cases(domain_case, "int8", uint8=False),
                           special=[domain_case("near-one-f32", "check", [65537], dist="near_one")]),
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
        [int_case(*row) for row in [
            ("smoke-int32", "smoke", [7, 33], "int32"),
            ("smoke-bool", "smoke", [5, 17], "bool"),
            ("smoke-uint8", "smoke", [5, 17], "uint8"),
            ("int64-hidden", "check", [8, 128, 768], "int64"),
            ("int32-transposed", "check", [257, 129], "int32", "transposed"),
            ("int16", "check", [4099], "int16"),
            ("int8-strided", "check", [129, 65], "int8", "strided"),
            ("uint8", "check", [257, 3], "uint8"),
            ("bool-mask", "check", [4, 1024, 1024], "bool"),
            ("bool-transposed", "check", [1023, 513], "bool", "transposed"),
            ("bool-expanded", "check", [64, 1000], "bool", "expanded"),
            ("scalar-bool", "check", [], "bool"),
            ("scalar-int64", "check", [], "int64"),
            ("empty-int32", "check", [0, 16], "int32"),
            ("bench-bool", "bench", [64, 4096, 4096], "bool"),
            ("bench-int32", "bench", [8192, 8192], "int32"),
            ("bench-int64", "bench", [4096, 8192], "int64"),
        ]],
        {"int": whole_range, "small": ints(-100, 101)},
        kernels=("unary_bitwise_not",), own_entry=True,
    ),
    Unary(
        "cosh",
        float_member_cases(normal_case, "float32", edge=("float16", "bfloat16"),
                           ints=promoted_int_cases(normal_case, "int16", uint8=False),
                           special=[normal_case("large-f32", "check", [65537], dist="large")]),
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
        float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                           special=[normal_case("tail-f32", "check", [65537], dist="tail")]),
        # tail: uniform on [-1, 9], the right tail down to 4e-37
        {"normal": normal(1.5), "int": ints(-5, 6),
         "tail": lambda shape, dtype, gen: (torch.rand(shape, generator=gen) * 10 - 1).to(dtype),
         # both tails, zero, the neighbourhood of 0.5, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-20, 0.4999, 0.5, 0.5001, -0.5, 1.0, -1.0, 2.5, 4.0, -4.0, 9.0, 10.5,
                       30.0, -30.0, INF, -INF, NAN])},
        kernels=("unary_erfc",),
    ),
    _exact("floor", [normal_case("smoke-int32", "smoke", [5, 17], "int32", dist="int"),
                     normal_case("smoke-edge-bf16", "smoke", [5, 17], "bfloat16", dist="edge")],
           normal=normal(100),
           # halves and integers of both signs, signed zeros, values beyond 2**23 (no fraction
           # in float32), infinities and NaN
           values=[0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 0.999999, -1e-20, 8388607.5, -8388607.5,
                   16777217.0, 1e30, -1e30, INF, -INF, NAN]),
    _activation("hardsigmoid", 3, [0.0, -0.0, -3.0, 3.0, -3.0001, 3.0001, -2.9999, 2.9999, 1.5, -1.5, 100.0,
                                   -100.0, INF, -INF, NAN]),
    Unary(
        "i0",
        float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                           special=[normal_case("large-f32", "check", [65537], dist="large")]),
        {"normal": normal(4), "large": symmetric(88.7), "int": ints(-88, 89),
         # zero, both signs, the neighbourhood of typical switch points (8, 10, 12), large
         # arguments just below the float32 overflow band and beyond it, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-20, 1.0, -3.75, 7.99, 8.0, 9.99, -10.0, 10.01, 12.0, -30.0, 50.0,
                       88.5, -88.7, 92.0, 1e30, INF, -INF, NAN])},
        kernels=("unary_exp", "unary_i0"),
    ),
    Unary(
        "log10",
        float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                           special=[normal_case("wide-range-f32", "check", [65537], dist="wide")]),
        {"normal": lognormal(3), "wide": decades, "int": ints(-3, 1_000_000, u8_high=256),
         # zeros, powers of ten, values near 1, the float32 extremes, the NaN domain and
         # infinities
         "edge": edge([0.0, -0.0, 1.0, 10.0, 100.0, 0.001, 0.999999, 1.000001, 1.5e-38, 3.4e38, 2.0,
                       -1.0, -1e-10, INF, -INF, NAN])},
    ),
    Unary(
        "logit",
        [logit_case("smoke-f32", "smoke", [7, 33]),
         logit_case("smoke-edge-eps-bf16", "smoke", [5, 17], "bfloat16", dist="edge", eps=2**-7),
         logit_case("f32-hidden", "check", [8, 128, 768]),
         logit_case("f32-eps", "check", [4096, 257], eps=1e-6),
         logit_case("f16-eps", "check", [4096, 257], "float16", eps=2**-7),
         logit_case("bf16", "check", [3, 1000, 129], "bfloat16"),
         logit_case("edge-f32", "check", [34, 9], dist="edge"),
         logit_case("edge-f32-eps0", "check", [34, 9], dist="edge", eps=0.0),
         logit_case("edge-f32-eps-neg", "check", [34, 9], dist="edge", eps=-0.5),
         logit_case("edge-f16-eps-big", "check", [17, 5], "float16", dist="edge", eps=0.75),
         logit_case("edge-bf16", "check", [17, 5], "bfloat16", dist="edge"),
         logit_case("transposed-f32", "check", [1023, 513], layout="transposed"),
         logit_case("strided-f16", "check", [300, 257], "float16", layout="strided", eps=0.0625),
         logit_case("expanded-f32", "check", [64, 1000], layout="expanded"),
         logit_case("scalar-f32", "check", []),
         logit_case("empty-f32", "check", [0, 16]),
         logit_case("int64", "check", [1000, 37], "int64", dist="int"),
         logit_case("int32-eps", "check", [4099], "int32", dist="int", eps=0.25),
         logit_case("bool", "check", [129, 7], "bool", dist="int"),
         logit_case("bench-f32", "bench", [8192, 8192]),
         logit_case("bench-bf16-eps", "bench", [16, 2048, 4096], "bfloat16", eps=2**-7),
         logit_case("bench-f16", "bench", [32, 1024, 1024], "float16")],
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
    _exact("neg", [normal_case("smoke-int8", "smoke", [5, 17], "int8", dist="int")], normal=normal(10),
           # signed zeros, the float extremes, subnormals, infinities and NaN
           values=[0.0, -0.0, 1.0, -2.5, 3.4e38, -3.4e38, 1e-40, -1e-45, 65504.0, INF, -INF, NAN]),
    Unary(
        "polygamma",
        [poly_case(name, tag, shape, dtype, layout, dist, n=n) for name, tag, shape, dtype, layout, dist, n in [
            ("smoke-digamma-f32", "smoke", [7, 33], F32, PLAIN, POS, 0),
            ("smoke-trigamma-edge-f32", "smoke", [3, 17], F32, PLAIN, "edge", 1),
            ("digamma-f32", "check", [512, 1000], F32, PLAIN, POS, 0),
            ("trigamma-f32", "check", [512, 1000], F32, PLAIN, POS, 1),
            ("n2-f32", "check", [256, 1000], F32, PLAIN, POS, 2),
            ("n3-f32", "check", [256, 1000], F32, PLAIN, POS, 3),
            ("n4-f32", "check", [128, 1000], F32, PLAIN, POS, 4),
            ("digamma-neg-f32", "check", [65537], F32, PLAIN, "negative", 0),
            ("trigamma-neg-f32", "check", [65537], F32, PLAIN, "negative", 1),
            ("n2-neg-f32", "check", [65537], F32, PLAIN, "negative", 2),
            ("n3-neg-f32", "check", [65537], F32, PLAIN, "negative", 3),
            ("digamma-edge-f32", "check", [34, 9], F32, PLAIN, "edge", 0),
            ("trigamma-edge-f32", "check", [34, 9], F32, PLAIN, "edge", 1),
            ("n2-edge-f32", "check", [34, 9], F32, PLAIN, "edge", 2),
            ("n3-edge-f32", "check", [34, 9], F32, PLAIN, "edge", 3),
            ("digamma-f16", "check", [2048, 257], "float16", PLAIN, POS, 0),
            ("trigamma-bf16", "check", [3, 500, 129], "bfloat16", PLAIN, POS, 1),
            ("n2-f16", "check", [1000, 129], "float16", PLAIN, POS, 2),
            ("digamma-edge-bf16", "check", [17, 5], "bfloat16", PLAIN, "edge", 0),
            ("transposed-f32", "check", [511, 513], F32, "transposed", POS, 1),
            ("strided-f16", "check", [300, 257], "float16", "strided", POS, 0),
            ("expanded-f32", "check", [64, 1000], F32, "expanded", POS, 2),
            ("scalar-f32", "check", [], F32, PLAIN, POS, 1),
            ("empty-f32", "check", [0, 16], F32, PLAIN, POS, 0),
            ("digamma-int64", "check", [1000, 37], "int64", PLAIN, "int", 0),
            ("trigamma-int32", "check", [4099], "int32", PLAIN, "int", 1),
            ("digamma-bool", "check", [129, 7], "bool", PLAIN, "int", 0),
            ("bench-digamma-f32", "bench", [8192, 8192], F32, PLAIN, POS, 0),
            ("bench-trigamma-f32", "bench", [8192, 8192], F32, PLAIN, POS, 1),
            ("bench-digamma-bf16", "bench", [16, 2048, 4096], "bfloat16", PLAIN, POS, 0),
            ("bench-n3-f16", "bench", [32, 1024, 1024], "float16", PLAIN, POS, 3),
        ]],
        # positive: from about 0.05 to 20 and beyond (concentration parameters and the like).
        # Digamma has poles at 0 and the negative integers: its integers start at -2 and its
        # special values add the poles, infinities and NaN (values not tested for n >= 1).
        {POS: lognormal(1.2), "negative": polygamma_negative,
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
        float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                           special=[normal_case("wide-range-f32", "check", [65537], dist="wide")]),
        # positive variances and the like, over a few decades
        {"normal": lognormal(2), "wide": decades, "int": ints(-3, 1_000_000, u8_high=256),
         # signed zeros, the float32 extremes, the NaN domain and infinities
         "edge": edge([0.0, -0.0, 1.0, 4.0, 0.25, 1e-37, 3.4e38, 2.0, 1e-6, 65504.0, -1.0, -1e-10, INF,
                       -INF, NAN])},
    ),
    _exact("sgn", [normal_case("smoke-complex64", "smoke", [5, 17], "complex64"),
                   normal_case("smoke-int8", "smoke", [5, 17], "int8", dist="small")],
           extra=[normal_case("bool", "check", [129, 7], "bool", dist="int"),
                  normal_case("complex64", "check", [1000, 129], "complex64"),
                  normal_case("complex64-scaled", "check", [4099], "complex64", dist="scaled"),
                  normal_case("complex64-transposed", "check", [257, 65], "complex64", layout="transposed"),
                  normal_case("complex64-scalar", "check", [], "complex64")],
           bench=[normal_case("bench-complex64", "bench", [4096, 4096], "complex64")],
           normal=sgn_values, scaled=partial(sgn_values, scaled=True),
           # signed zeros, tiny and huge values, infinities and NaN
           values=[0.0, -0.0, 1e-30, -1e-30, 1.0, -2.5, 3.4e38, -3.4e38, INF, -INF, NAN]),
    _activation("silu", 4, [0.0, -0.0, 1e-20, 1.0, -1.0, 5.0, -5.0, 20.0, -20.0, 88.0, -88.0, -89.0, -100.0,
                            100.0, INF, -INF, NAN]),
    Unary(
        "special_entr",
        float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                           special=[normal_case("probs-f32", "check", [256, 32000], dist="probs")]),
        {"normal": entr_values, "probs": softmax_rows, "int": ints(-3, 1000),
         # signed zeros, tiny and huge values, 1 (entropy 0), negatives, infinities and NaN
         "edge": edge([0.0, -0.0, 1e-30, 1e-5, 0.36787944, 1.0, 2.0, 1e30, -1e-30, -1.0, INF, -INF, NAN])},
    ),
    _exact("square", [normal_case("smoke-int16", "smoke", [5, 17], "int16", dist="int")],
           extra=[normal_case("bool", "check", [129, 7], "bool", dist="int"),
                  normal_case("small-int32", "check", [4096], "int32", dist="small")],
           normal=normal(10),
           # signed zeros, values whose square overflows or underflows, infinities and NaN
           values=[0.0, -0.0, 1.0, -2.5, 1e19, -1.9e19, 1e-30, 255.9, -300.0, 65504.0, INF, -INF, NAN]),
]
