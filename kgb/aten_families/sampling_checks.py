"""The statistical comparisons of the sampling family (bernoulli, exponential_, poisson,
rrelu_with_noise): a random op's answer cannot equal PyTorch's draws, so each `compare`
checks the support, the distribution (Hoeffding or Dvoretzky-Kiefer-Wolfowitz bounds)
and the independence of neighbouring samples. The statistics run on the samples' device:
float64 sorts and means of a GPU-sized output are slow on the host."""

from __future__ import annotations

import math

import torch

from kgb.aten_families.results import outside_untouched, returns_self, tensor_form
from kgb.evaluate.correctness import compare_values

# Every statistical test fails a correct sampler with probability at most ALPHA (DKW with
# Massart's constant, valid for discrete distributions too, and Hoeffding's inequality:
# exact bounds, no normal approximation). A case runs at most 10 + 15 (bernoulli), 11 +
# 15 (poisson) or 16 tests and an evaluation at most ~20 case runs, so a correct solution
# fails an evaluation with probability below 1e-7.
ALPHA = 1e-10
# Largest relative rounding error of one rounding to the dtype, doubled as an allowance
# for a draw rounded through float32 first (and, for rrelu, out and noise rounded
# separately); it moves a uniform CDF by at most that.
_ROUNDING = {
    torch.float16: 2.0**-10,
    torch.bfloat16: 2.0**-7,
    torch.float32: 2.0**-23,
    torch.float64: 2.0**-23,
}
_RTOL = {torch.float16: 1e-3, torch.bfloat16: 0.016, torch.float32: 1e-5, torch.float64: 1e-5}


def _eps(n: int, width: float) -> float:
    """Deviation of a mean of n independent terms, each within an interval of `width`,
    from its expectation, exceeded with probability at most ALPHA."""
    return width * math.sqrt(math.log(2 / ALPHA) / (2 * n))


def _uncorrelated(y: torch.Tensor, bound: float, row: int, what: str = "samples") -> str | None:
    """y: flat, independent and mean 0 under the null, |y| <= bound. Tests disjoint pairs
    (i, i + lag), whose products are independent with mean 0."""
    n = y.numel()
    for lag in sorted({1, 2, 3, row} | {2**k for k in range(4, 15)}):
        m = n // (2 * lag) * 2 * lag
        if lag < 1 or m // 2 < 1000:
            continue
        pairs = y[:m].view(-1, 2, lag)
        mean = float((pairs[:, 0] * pairs[:, 1]).mean())
        if abs(mean) > _eps(m // 2, 2 * bound * bound):
            return f"{what} {lag} apart are correlated (mean product {mean:.3g}): draws must be independent"
    return None


def _independent(y: torch.Tensor, bound: float, t: torch.Tensor, where: str, what: str = "samples") -> str | None:
    """`_uncorrelated` over the samples of `t` (its row length one of the lags), the
    message naming `where` they were found."""
    message = _uncorrelated(y, bound, t.shape[-1] if t.dim() else 1, what)
    return f"{where}: {message}" if message else None


def _uniform_distance(u: torch.Tensor) -> float:
    """The Kolmogorov distance between the empirical CDF of the flat float64 `u` and the
    uniform CDF on [0, 1]."""
    n = u.numel()
    s = u.sort().values
    i = torch.arange(1, n + 1, dtype=torch.float64, device=s.device)
    return float(torch.maximum(i / n - s, s - (i - 1) / n).max())


def _samples(actual, expected) -> tuple[str | None, torch.Tensor | None]:
    """The returned samples as a flat float64 tensor on the reference's device (the same
    one, unless a candidate picked another GPU), or the message of a wrong form; (None,
    None) when there are no samples."""
    a, e = actual["return"], expected["return"]
    message = tensor_form(a, e)
    if message or a.numel() == 0:
        return message, None
    return None, a.detach().to(e.device, torch.float64).reshape(-1)


def bernoulli_compare(actual, expected, case, inputs):
    message, x = _samples(actual, expected)
    if x is None:
        return message
    a = actual["return"]
    if case.entry == "bernoulli":
        p = inputs["self"].detach().to(torch.float64)
    elif case.entry == "bernoulli_p":
        p = torch.full(tuple(a.shape), float(inputs["p"]), dtype=torch.float64, device=x.device)
    else:
        p = inputs["p"].detach().to(torch.float64).expand(a.shape)
    p = p.reshape(-1)
    if not bool(((x == 0) | (x == 1)).all()):
        return "return value: values other than 0 and 1"
    if bool((x[p == 0] != 0).any()) or bool((x[p == 1] != 1).any()):
        return "return value: a probability of exactly 0 or 1 did not give 0 or 1"
    bins = (p * 10).floor().clamp(max=9)
    for b in range(10):
        sel = bins == b
        k = int(sel.sum())
        if k < 100:
            continue
        diff = float((x[sel] - p[sel]).mean())
        if abs(diff) > _eps(k, 1.0):
            return (
                f"return value: for p in [{b / 10:.1f}, {(b + 1) / 10:.1f}) the share of ones is off by "
                f"{diff:.4g} over {k} samples (allowed {_eps(k, 1.0):.3g})"
            )
    return _independent(x - p, 1.0, a, "return value")


def exponential_compare(actual, expected, case, inputs):
    self_ = inputs["self"]
    message = returns_self(actual["return"], self_, "exponential_")
    if message:
        return message
    ref = expected["self"]
    if self_.dtype != ref.dtype or self_.shape != ref.shape:
        return "argument self: dtype or shape changed"
    message = outside_untouched(self_, ref)
    if message or self_.numel() == 0:
        return message
    # on self's own device
    x = self_.detach().to(torch.float64).reshape(-1)
    if not bool((torch.isfinite(x) & (x >= 0)).all()):
        return "argument self: samples must be finite and >= 0"
    u = -torch.expm1(-case.params["lambd"] * x)  # uniform on [0, 1) for a correct sampler
    if x.numel() >= 100:
        dist = _uniform_distance(u)
        allowed = _eps(x.numel(), 1.0) + _ROUNDING[self_.dtype]
        if dist > allowed:
            return (
                f"argument self: not exponential with rate {case.params['lambd']}: the CDF is off by "
                f"{dist:.4g} (allowed {allowed:.3g})"
            )
    return _independent(u - 0.5, 0.5, self_, "argument self")


def _rounded_law(rate: float, dtype: torch.dtype):
    """The distinct values a Poisson(rate) count takes once rounded to dtype, with their
    probabilities and CDF (the tail left out has probability below 1e-30)."""
    if rate == 0:
        one = torch.ones(1, dtype=torch.float64)
        return torch.zeros(1, dtype=torch.float64), one, one
    k = torch.arange(math.ceil(rate + 15 * math.sqrt(rate) + 40) + 1, dtype=torch.float64)
    pmf = torch.exp(k * math.log(rate) - rate - torch.lgamma(k + 1))
    values, group = torch.unique_consecutive(k.to(dtype).to(torch.float64), return_inverse=True)
    probs = torch.zeros(values.numel(), dtype=torch.float64).index_add_(0, group, pmf)
    return values, probs, probs.cumsum(0)


def poisson_compare(actual, expected, case, inputs):
    message, x = _samples(actual, expected)
    if x is None:
        return message
    a = actual["return"]
    rates = inputs["self"].detach().to(torch.float64).reshape(-1)
    if not bool(torch.isfinite(x).all()):
        return "return value: non-finite counts"
    mid = torch.empty_like(x)  # mid-distribution transform: mean exactly 1/2, in [0, 1]
    for rate in rates.unique().tolist():
        sel = rates == rate
        xs = x[sel]
        # a small table, made on the host (where it always was) and moved to the samples
        values, probs, cdf = (t.to(x.device) for t in _rounded_law(rate, a.dtype))
        j = torch.searchsorted(values, xs).clamp(max=values.numel() - 1)
        if not bool((values[j] == xs).all()):
            bad = xs[values[j] != xs][0].item()
            return f"return value: {bad:g} is not a possible count for rate {rate:g}"
        mid[sel] = cdf[j] - probs[j] / 2
        n = xs.numel()
        if n >= 100:
            ecdf = torch.searchsorted(xs.sort().values, values, right=True).to(torch.float64) / n
            dist = float((ecdf - cdf).abs().max())
            if dist > _eps(n, 1.0):
                return (
                    f"return value: counts for rate {rate:g} are not Poisson: the CDF is off by {dist:.4g} "
                    f"over {n} samples (allowed {_eps(n, 1.0):.3g})"
                )
    return _independent(mid - 0.5, 0.5, a, "return value")


def rrelu_compare(actual, expected, case, inputs):
    p = case.params
    if not p["training"]:
        for key, what in (("return", "return value"), ("noise", "argument noise")):
            message, _, _ = compare_values(what, actual[key], expected[key], case.reduction)
            if message:
                return message
        return None
    message, out = _samples(actual, expected)
    if out is None:
        return message
    a = actual["return"]
    x = inputs["self"].detach().to(torch.float64).reshape(-1)
    r = actual["noise"].detach().to(torch.float64).reshape(-1)
    pos = x > 0
    if not (bool((r[pos] == 1).all()) and bool((out[pos] == x[pos]).all())):
        return "where self > 0, out must equal self and noise must be 1"
    lower, upper, rho = p["lower"], p["upper"], _ROUNDING[a.dtype]
    rn = r[~pos]
    if not bool(((rn >= lower * (1 - rho)) & (rn <= upper * (1 + rho))).all()):
        return f"argument noise: slopes outside [{lower:g}, {upper:g}] (or not written) where self <= 0"
    xr = x[~pos] * rn
    # absolute slack of two subnormal steps: float16 products can be subnormal
    tiny = 2 * torch.finfo(a.dtype).eps * torch.finfo(a.dtype).tiny
    if not bool(((out[~pos] - xr).abs() <= _RTOL[a.dtype] * xr.abs() + tiny).all()):
        return "return value: out differs from self * noise where self <= 0"
    if upper - lower <= 4 * rho * upper:
        return None  # (almost) one fixed slope: nothing random to test
    u = ((r - lower) / (upper - lower)).clamp(0, 1)
    un = u[~pos]
    if un.numel() >= 100:
        dist = _uniform_distance(un)
        allowed = _eps(un.numel(), 1.0) + rho * upper / (upper - lower)
        if dist > allowed:
            return f"argument noise: slopes are not uniform on [{lower:g}, {upper:g}]: CDF off by {dist:.4g} (allowed {allowed:.3g})"
    return _independent(torch.where(pos, 0.0, u - 0.5), 0.5, a, "argument noise", "slopes")
