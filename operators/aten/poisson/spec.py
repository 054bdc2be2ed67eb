"""Poisson samples: `aten::poisson` (default overload).

Returns a new tensor with the shape and dtype of `self` whose element i is an
independent draw from the Poisson distribution with rate `self[i]`:
P(X = k) = rate**k * exp(-rate) / k!  for k = 0, 1, 2, ...

- `self` holds the rates: float16, bfloat16, float32 or float64, each finite and >= 0
  (a rate of 0 always gives 0). Rates range from tiny (1e-3) to large (1e5): use an exact
  method for every rate, not a normal approximation. A common choice is inversion of the
  CDF (one uniform) for rates below 10 and Hörmann's transformed rejection (PTRS) for
  rates of 10 and more; its acceptance test needs log(k!) accurately (float64, or a
  Stirling series), and a loop until every lane in a block has accepted.
- The count is returned as a value of `self`'s dtype, rounded once to it (bfloat16 holds
  integers exactly only up to 256; larger counts round like any value).
- `self` may be non-contiguous (transposed), 0-d or empty; the result may have any
  strides. `self` must not be modified.
- Randomness: `generator` is always None here. Make the random stream in the kernel (for
  example Triton's Philox `tl.rand`/`tl.rand4x(seed, offsets)` with distinct offsets per
  element and per draw) from a seed you choose on the host, e.g. from
  `torch.initial_seed()` and a per-call counter, so that two calls give different
  samples. PyTorch's random ops are not allowed, and host-side randomness must not
  produce the samples themselves.
- Checked statistically, with a total false-failure rate below 1e-6: every value is a
  possible (rounded) count of its rate; for each distinct rate the empirical CDF matches
  the exact Poisson CDF of the rounded counts (Dvoretzky-Kiefer-Wolfowitz bound); and,
  through the mid-distribution transform, samples at several distances apart (1, 2, 3,
  the row length and powers of two) are uncorrelated. Results need not equal PyTorch's
  own draws.

Required entry point: `poisson`. Not required: `poisson.out`.
"""

import math

import torch

from kgb.operators import Case

VERSION = 2
RANDOM = True  # every call must draw new samples: the judge calls twice on the same inputs

SIGNATURES = '''
def poisson(self: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::poisson(Tensor self, Generator? generator=None) -> Tensor"""
'''

# Each case draws its rates from a small set, so that every rate has many samples and a
# CDF test of its own. The default set straddles the usual algorithm switch at 10.
_MIXED = (0.0, 1e-3, 0.5, 1.0, 3.7, 9.99, 10.0, 10.5, 27.5, 100.0, 1234.5)


def _case(name, tag, shape, dtype="float32", rates=_MIXED, transposed=False):
    return Case(name, tag, dict(shape=shape, dtype=dtype, rates=rates, transposed=transposed))


CASES = [
    _case("smoke-f32", "smoke", [64, 64]),
    _case("smoke-f16", "smoke", [4096], "float16"),
    _case("mixed-f32", "check", [256, 512]),
    _case("mixed-bf16-transposed", "check", [300, 401], "bfloat16", transposed=True),
    _case("mixed-f16", "check", [128, 1024], "float16"),
    _case("mixed-f64", "check", [65537], "float64"),
    _case("small-rates", "check", [131072], "float32", (0.0, 0.01, 0.1, 0.3)),
    _case("large-rates", "check", [2, 32768], "float32", (10.0, 50.0, 5000.0, 100000.0)),
    _case("single-rate-10", "check", [65536], "float32", (10.0,)),
    _case("scalar", "check", [], "float32", (4.5,)),
    _case("empty", "check", [0, 8]),
    _case("bench-mixed-f32", "bench", [4096, 8192]),
    _case("bench-small-bf16", "bench", [4096, 8192], "bfloat16", (0.1, 0.5, 1.0, 2.0, 5.0)),
    _case("bench-large-f32", "bench", [4096, 4096], "float32", (20.0, 100.0, 1000.0)),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = list(p["shape"])
    if p["transposed"]:
        shape[-2], shape[-1] = shape[-1], shape[-2]
    rates = torch.tensor(p["rates"], dtype=torch.float64)
    pick = torch.randint(len(p["rates"]), shape, generator=gen)
    x = rates[pick].to(getattr(torch, p["dtype"])).to(device)
    return dict(self=x.transpose(-2, -1) if p["transposed"] else x)


reference = torch.ops.aten.poisson.default

# Every statistical test below fails a correct sampler with probability at most ALPHA
# (DKW with Massart's constant, valid for discrete distributions too, and Hoeffding's
# inequality: exact bounds). A case runs at most 11 + 15 tests and an evaluation at most
# ~15 case runs: a correct solution fails an evaluation with probability below 1e-7.
ALPHA = 1e-10


def _eps(n: int, width: float) -> float:
    """Deviation of a mean of n independent terms, each within an interval of `width`,
    from its expectation, exceeded with probability at most ALPHA."""
    return width * math.sqrt(math.log(2 / ALPHA) / (2 * n))


def _uncorrelated(y: torch.Tensor, bound: float, row: int) -> str | None:
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
            return f"samples {lag} apart are correlated (mean product {mean:.3g}): draws must be independent"
    return None


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


def compare(actual, expected, case, inputs):
    a, e = actual["return"], expected["return"]
    if not isinstance(a, torch.Tensor):
        return f"return value: expected a tensor, got {type(a).__name__}"
    for what, got, want in (
        ("shape", tuple(a.shape), tuple(e.shape)),
        ("dtype", a.dtype, e.dtype),
        ("device", a.device.type, e.device.type),
    ):
        if got != want:
            return f"return value: {what} {got}, expected {want}"
    if a.numel() == 0:
        return None
    # on the reference's device (the same one, unless a candidate picked another GPU):
    # float64 sorts of a GPU-sized output are slow on the host
    x = a.detach().to(e.device, torch.float64).reshape(-1)
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
    row = a.shape[-1] if a.dim() else 1
    message = _uncorrelated(mid - 0.5, 0.5, row)
    return f"return value: {message}" if message else None
