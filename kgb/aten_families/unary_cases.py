"""The unary family's cases (unary.py), one list per member: the case lists the members
share, with the knobs in which they differ, then each member's. This module holds hidden
cases and is kept out of the processes that run candidate code (see
kgb.operators.import_spec_libraries): only `unary.cases` and the generator import it."""

from __future__ import annotations

from collections.abc import Callable

from kgb.operators import Case

SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def case_maker(dist: str = "normal", **extra) -> Callable[..., Case]:
    """The case constructor of a member whose cases draw `dist` unless they say otherwise
    and carry `extra` parameters (logit's eps, polygamma's n) with these defaults."""

    def case(name, tag, shape, dtype="float32", layout="contiguous", dist=dist, seed=0, **params):
        params = dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist, **{**extra, **params})
        return Case(name, tag, params, seed=seed)

    return case


def float_cases(case, special=(), edge=("bfloat16",), f16=("f16", [4096, 257]), strided="float16"):
    """The check cases of the floating dtypes: sizes, `special` (a member's own ranges),
    special values, layouts, 0-d and empty."""
    return [
        case("f32-hidden", "check", [8, 128, 768]),
        case(f16[0], "check", f16[1], "float16"),
        case("bf16", "check", [3, 1000, 129], "bfloat16"),
        *special,
        case("edge-f32", "check", [34, 9], dist="edge"),
        *[case(f"edge-{SHORT[dtype]}", "check", [17, 5], dtype, dist="edge") for dtype in edge],
        case("transposed-f32", "check", [1023, 513], layout="transposed"),
        case(f"strided-{SHORT[strided]}", "check", [300, 257], strided, layout="strided"),
        case("expanded-f32", "check", [64, 1000], layout="expanded"),
        case("scalar-f32", "check", []),
        case("empty-f32", "check", [0, 16]),
    ]


def promoted_int_cases(case, dtype="int32", uint8=True):
    """Integer and bool inputs of a member that computes them in float32."""
    return [
        case("int64", "check", [1000, 37], "int64", dist="int"),
        case(dtype, "check", [4099], dtype, dist="int"),
        *([case("uint8", "check", [257, 3], "uint8", dist="int")] if uint8 else []),
        case("bool", "check", [129, 7], "bool", dist="int"),
    ]


def exact_int_cases(case):
    """Every integer dtype, over its whole range, of a member that keeps it."""
    return [
        case("int64", "check", [1000, 37], "int64", dist="int"),
        case("int32-transposed", "check", [257, 129], "int32", layout="transposed", dist="int"),
        case("int16", "check", [4099], "int16", dist="int"),
        case("int8", "check", [129, 65], "int8", dist="int"),
        case("uint8", "check", [257, 3], "uint8", dist="int"),
        case("scalar-int64", "check", [], "int64", dist="small"),
    ]


def bench_cases(case):
    return [
        case("bench-f32", "bench", [8192, 8192]),
        case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
        case("bench-f16", "bench", [32, 1024, 1024], "float16"),
    ]


def float_member_cases(case, smoke_edge, special=(), ints=(), **float_kw):
    """The whole list of a member that computes in float32."""
    return [
        case("smoke-f32", "smoke", [7, 33]),
        case(f"smoke-edge-{SHORT[smoke_edge]}", "smoke", [5, 17], smoke_edge, dist="edge"),
        *float_cases(case, special, **float_kw),
        *ints,
        *bench_cases(case),
    ]


# ---- the members' cases --------------------------------------------------------------

normal_case = case_maker()
domain_case = case_maker("domain")  # acosh and asin call their main distribution "domain"
int_case = case_maker("int")
logit_case = case_maker("probs", eps=None)
poly_case = case_maker("positive", n=0)
F32, PLAIN, POS = "float32", "contiguous", "positive"  # polygamma's common columns


def activation_cases():
    """hardsigmoid, mish, silu: floating inputs only, MLP-sized cases."""
    return float_member_cases(normal_case, "bfloat16", edge=("float16",), f16=("f16-mlp", [512, 3073]),
                              strided="bfloat16")


def exact_cases(smoke, extra=(), bench=()):
    """floor, neg, sgn, square: the result keeps the dtype, every integer dtype is a case
    (over its whole range, or small values)."""
    case = normal_case
    return [case("smoke-f32", "smoke", [7, 33]), *smoke, *float_cases(case), *exact_int_cases(case), *extra,
            *bench_cases(case), *bench]


CASES = {
    "acosh": float_member_cases(domain_case, "float16", ints=promoted_int_cases(domain_case),
                                special=[domain_case("wide-range-f32", "check", [65537], dist="wide")]),
    "asin": float_member_cases(domain_case, "bfloat16", edge=("float16",),
                               ints=promoted_int_cases(domain_case, "int8", uint8=False),
                               special=[domain_case("near-one-f32", "check", [65537], dist="near_one")]),
    "bitwise_not": [int_case(*row) for row in [
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
    "cosh": float_member_cases(normal_case, "float32", edge=("float16", "bfloat16"),
                               ints=promoted_int_cases(normal_case, "int16", uint8=False),
                               special=[normal_case("large-f32", "check", [65537], dist="large")]),
    "erfc": float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                               special=[normal_case("tail-f32", "check", [65537], dist="tail")]),
    "floor": exact_cases([normal_case("smoke-int32", "smoke", [5, 17], "int32", dist="int"),
                          normal_case("smoke-edge-bf16", "smoke", [5, 17], "bfloat16", dist="edge")]),
    "hardsigmoid": activation_cases(),
    "i0": float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                             special=[normal_case("large-f32", "check", [65537], dist="large")]),
    "log10": float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                                special=[normal_case("wide-range-f32", "check", [65537], dist="wide")]),
    "logit": [
        logit_case("smoke-f32", "smoke", [7, 33]),
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
        logit_case("bench-f16", "bench", [32, 1024, 1024], "float16"),
    ],
    "mish": activation_cases(),
    "neg": exact_cases([normal_case("smoke-int8", "smoke", [5, 17], "int8", dist="int")]),
    "polygamma": [poly_case(name, tag, shape, dtype, layout, dist, n=n) for name, tag, shape, dtype, layout, dist, n in [
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
    "rsqrt": float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                                special=[normal_case("wide-range-f32", "check", [65537], dist="wide")]),
    "sgn": exact_cases([normal_case("smoke-complex64", "smoke", [5, 17], "complex64"),
                        normal_case("smoke-int8", "smoke", [5, 17], "int8", dist="small")],
                       extra=[normal_case("bool", "check", [129, 7], "bool", dist="int"),
                              normal_case("complex64", "check", [1000, 129], "complex64"),
                              normal_case("complex64-scaled", "check", [4099], "complex64", dist="scaled"),
                              normal_case("complex64-transposed", "check", [257, 65], "complex64",
                                          layout="transposed"),
                              normal_case("complex64-scalar", "check", [], "complex64")],
                       bench=[normal_case("bench-complex64", "bench", [4096, 4096], "complex64")]),
    "silu": activation_cases(),
    "special_entr": float_member_cases(normal_case, "float16", ints=promoted_int_cases(normal_case),
                                       special=[normal_case("probs-f32", "check", [256, 32000], dist="probs")]),
    "square": exact_cases([normal_case("smoke-int16", "smoke", [5, 17], "int16", dist="int")],
                          extra=[normal_case("bool", "check", [129, 7], "bool", dist="int"),
                                 normal_case("small-int32", "check", [4096], "int32", dist="small")]),
}
