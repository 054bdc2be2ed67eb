"""The input distributions of the unary family's table (unary_ops.py): shared ones, then
those of one member that take more than a line. A case names its distribution (`dist`); the
cases themselves are in unary_cases.py."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

Draw = Callable[[list, torch.dtype, torch.Generator], torch.Tensor]


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
