"""The pieces the unary family's table (unary_ops.py) builds its members from: the case
lists they share, with the knobs in which they differ, and the input distributions (shared
ones, then those of one member that take more than a line)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from kgb.operators import Case

Draw = Callable[[list, torch.dtype, torch.Generator], torch.Tensor]

# ---- cases ---------------------------------------------------------------------------

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


# ---- inputs --------------------------------------------------------------------------


def _bool(shape, gen):
    return torch.randint(0, 2, shape, generator=gen).to(torch.bool)


def edge(values: list[float]) -> Draw:
    """The special `values`, shuffled and repeated to fill the shape."""

    def draw(shape, dtype, gen):
        n = math.prod(shape)
        vals = torch.tensor(values, dtype=torch.float32)
        idx = torch.randperm(max(n, 1), generator=gen)[:n] % len(values)
        return vals[idx].reshape(shape).to(dtype)

    return draw


def ints(low: int, high: int, u8_low: int = 0, u8_high: int | None = None) -> Draw:
    """Bool: 0 or 1. Integers: uniform in [low, high), for uint8 in [u8_low, u8_high or high)."""

    def draw(shape, dtype, gen):
        if dtype == torch.bool:
            return _bool(shape, gen)
        if dtype == torch.uint8:
            return torch.randint(u8_low, u8_high or high, shape, generator=gen).to(dtype)
        return torch.randint(low, high, shape, generator=gen).to(dtype)

    return draw


def whole_range(shape, dtype, gen):
    """The whole range of the dtype, its extremes first."""
    if dtype == torch.bool:
        return _bool(shape, gen)
    info = torch.iinfo(dtype)
    wide = torch.int64 if dtype != torch.uint8 else torch.int16
    x = torch.randint(info.min, info.max, shape, generator=gen, dtype=wide).to(dtype)
    flat = x.reshape(-1)
    if flat.numel() >= 4:
        flat[:4] = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1]).to(dtype)
    return x


def normal(scale: float) -> Draw:
    return lambda shape, dtype, gen: (torch.randn(shape, generator=gen) * scale).to(dtype)


def lognormal(scale: float) -> Draw:
    """Positive, over a few decades."""
    return lambda shape, dtype, gen: torch.exp(torch.randn(shape, generator=gen) * scale).to(dtype)


def symmetric(bound: float) -> Draw:
    """Uniform on [-bound, bound]."""
    return lambda shape, dtype, gen: ((torch.rand(shape, generator=gen) * 2 - 1) * bound).to(dtype)


def decades(shape, dtype, gen):
    """10**u for u in [-37, 38]: positive, over the whole float32 range."""
    return (10.0 ** (torch.rand(shape, generator=gen).double() * 75 - 37)).to(dtype)


# ---- the distributions of one member each ----------------------------------------------


def acosh_domain(shape, dtype, gen):
    # mostly in the domain, about one in ten below 1 (NaN results)
    return (0.6 + torch.randn(shape, generator=gen).abs() * 4).to(dtype)


def acosh_wide(shape, dtype, gen):
    # 1 + 10**u for u in [-7, 30]: close to 1 up to huge
    u = torch.rand(shape, generator=gen) * 37 - 7
    return (1 + 10.0 ** u.double()).to(dtype)


def asin_near_one(shape, dtype, gen):
    # +-(1 - 10**u), u in [-8, 0]
    u = torch.rand(shape, generator=gen) * 8 - 8
    sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
    return (sign * (1 - 10.0 ** u.double())).to(dtype)


def logit_probs(shape, dtype, gen):
    # probabilities in (0, 1), with a few percent of exact 0s and 1s and values outside [0, 1]
    x = torch.rand(shape, generator=gen).double() * 1.04 - 0.02
    u = torch.rand(shape, generator=gen)
    x = torch.where(u < 0.02, 0.0, torch.where(u > 0.98, 1.0, x))
    return x.to(dtype)


def polygamma_negative(shape, dtype, gen):
    # -k - f, k in 0..2, f in [0.1, 0.9]: away from the poles
    k = torch.randint(0, 3, shape, generator=gen)
    return (-k - 0.1 - 0.8 * torch.rand(shape, generator=gen)).to(dtype)


def sgn_values(shape, dtype, gen, scaled=False):
    # about a tenth exact zeros; complex `scaled` magnitudes from 1e-30 to 1e30
    if dtype == torch.complex64:
        re, im = torch.randn([2] + shape, generator=gen)
        if scaled:
            re, im = (torch.stack([re, im]) * 10.0 ** (torch.rand(shape, generator=gen) * 60 - 30))
        keep = torch.rand(shape, generator=gen) > 0.1
        return torch.complex(re * keep, im * keep)
    x = torch.randn(shape, generator=gen) * 10
    return (x * (torch.rand(shape, generator=gen) > 0.1)).to(dtype)


def entr_values(shape, dtype, gen):
    # mostly positive, about a tenth zeros and a few negatives
    x = torch.rand(shape, generator=gen) * 3 - 0.1
    return torch.where(torch.rand(shape, generator=gen) < 0.1, 0.0, x).to(dtype)


def softmax_rows(shape, dtype, gen):
    # rows of a softmax: many tiny probabilities
    return torch.softmax(torch.randn(shape, generator=gen) * 3, dim=-1).to(dtype)
