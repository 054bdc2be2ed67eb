"""Randomized leaky ReLU that records its slopes: `aten::rrelu_with_noise` (default overload).

Returns a new tensor `out` with the shape and dtype of `self`; `noise` (same shape and
dtype as `self`) is an in/out buffer.

- `training=True`: for each element independently, if `self[i] <= 0` draw a slope
  r uniform in [lower, upper], set `out[i] = self[i] * r` and `noise[i] = r`; otherwise
  (`self[i] > 0`) `out[i] = self[i]` and `noise[i] = 1`. Every element of `noise` is
  overwritten. Draw and multiply in float32 (or wider) and round once to the dtype.
- `training=False` (evaluation): a fixed slope, `out[i] = self[i]` if `self[i] >= 0`
  else `self[i] * (lower + upper) / 2`; `noise` must be left exactly as it was.
- `lower <= upper` are Python floats (defaults 1/8 and 1/3); `lower == upper` is allowed.
- dtypes: float16, bfloat16, float32, float64. `self` and `noise` may each be
  non-contiguous (transposed) with different strides, 0-d or empty; `out` may have any
  strides. `self` must not be modified.
- Randomness: `generator` is always None here. Make the random stream in the kernel (for
  example Triton's Philox `tl.rand(seed, offsets)` with a distinct offset per element)
  from a seed you choose on the host, e.g. from `torch.initial_seed()` and a per-call
  counter, so that two calls give different draws. PyTorch's random ops are not
  allowed, and host-side randomness must not produce the draws themselves.
- Checked: evaluation mode against PyTorch with the usual tolerance. Training mode
  statistically, with a total false-failure rate below 1e-6: exact `out`/`noise` where
  `self > 0`; slopes within [lower, upper]; `out` equal to `self * noise` up to the
  dtype's rounding; the slopes' empirical distribution uniform (Dvoretzky-Kiefer-
  Wolfowitz bound, with an allowance for rounding to the dtype); slopes at several
  distances apart (1, 2, 3, the row length and powers of two) uncorrelated. Results need
  not equal PyTorch's own draws.

Required entry point: `rrelu_with_noise`. Not required: `rrelu_with_noise.out`, the
in-place and functional variants.
"""

import math

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 2

SIGNATURES = '''
def rrelu_with_noise(self: torch.Tensor, noise: torch.Tensor, lower: float = 0.125, upper: float = 0.3333333333333333, training: bool = False, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor"""
'''

INOUT_ARGS = ("noise",)


def _case(
    name, tag, shape, dtype="float32", training=True, lower=0.125, upper=1 / 3, layout="contiguous"
):
    params = dict(
        shape=shape, dtype=dtype, training=training, lower=lower, upper=upper, layout=layout
    )
    return Case(name, tag, params)


CASES = [
    _case("smoke-train-f32", "smoke", [64, 64]),
    _case("smoke-eval-f32", "smoke", [37, 5], training=False),
    _case("smoke-train-bf16-bounds", "smoke", [4096], "bfloat16", lower=0.1, upper=0.3),
    _case("train-f32", "check", [512, 511]),
    _case("train-bf16-self-transposed", "check", [300, 777], "bfloat16", layout="self_transposed"),
    _case("train-f16", "check", [256, 1024], "float16", lower=0.01, upper=0.5),
    _case("train-noise-transposed", "check", [129, 1000], "float32", layout="noise_transposed"),
    _case("train-f64", "check", [100003], "float64"),
    _case("train-fixed-slope", "check", [3, 4097], "float32", lower=0.2, upper=0.2),
    _case("train-scalar", "check", [], "float32"),
    _case("train-empty", "check", [0, 9], "float32"),
    _case("eval-bf16", "check", [64, 4099], "bfloat16", training=False),
    _case(
        "eval-f16-transposed",
        "check",
        [257, 129],
        "float16",
        training=False,
        layout="self_transposed",
    ),
    _case("eval-f32-bounds", "check", [1000], "float32", training=False, lower=0.05, upper=0.45),
    _case("bench-train-f32", "bench", [4096, 8192]),
    _case("bench-train-bf16", "bench", [16, 2048, 1024], "bfloat16"),
    _case("bench-eval-f16", "bench", [16, 2048, 1024], "float16", training=False),
]


def _maybe_transposed(shape, transposed, make):
    shape = list(shape)
    if transposed and len(shape) >= 2:
        shape[-2], shape[-1] = shape[-1], shape[-2]
        return make(shape).transpose(-2, -1)
    return make(shape)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])

    def make_self(shape):
        x = torch.randn(shape, generator=gen) * 3
        return torch.where(torch.rand(shape, generator=gen) < 0.01, 0.0, x)  # some exact zeros

    def make_noise(shape):
        if p["training"]:  # NaN: an element a solution forgets to write shows
            return torch.full(shape, float("nan"))
        return torch.rand(shape, generator=gen) * 5  # must come back unchanged

    x = _maybe_transposed(
        p["shape"], p["layout"] == "self_transposed", lambda s: make_self(s).to(dtype).to(device)
    )
    noise = _maybe_transposed(
        p["shape"], p["layout"] == "noise_transposed", lambda s: make_noise(s).to(dtype).to(device)
    )
    return dict(self=x, noise=noise, lower=p["lower"], upper=p["upper"], training=p["training"])


def reference(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    op = torch.ops.aten.rrelu_with_noise.default
    if self.dtype == torch.float16 and self.device.type == "cpu":
        # ATen has no float16 CPU kernel: compute in float32, as its CUDA kernel does
        noise32 = noise.float()
        out = op(self.float(), noise32, lower, upper, training, generator)
        noise.copy_(noise32)
        return out.half()
    return op(self, noise, lower, upper, training, generator)


# Every statistical test below fails a correct sampler with probability at most ALPHA
# (DKW with Massart's constant and Hoeffding's inequality: exact bounds). A case runs at
# most 16 tests and an evaluation at most ~20 case runs: a correct solution fails an
# evaluation with probability below 1e-7.
ALPHA = 1e-10
# Relative error of one rounding to the dtype, doubled (a draw may be rounded through
# float32 first, and out and noise are rounded separately).
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
            return f"slopes {lag} apart are correlated (mean product {mean:.3g}): draws must be independent"
    return None


def compare(actual, expected, case, inputs):
    p = case.params
    if not p["training"]:
        for key, what in (("return", "return value"), ("noise", "argument noise")):
            message, _, _ = compare_values(what, actual[key], expected[key], case.reduction)
            if message:
                return message
        return None
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
    # on the reference's device (the same one, unless a candidate picked another GPU): a
    # float64 sort of a GPU-sized output is slow on the host
    out = a.detach().to(e.device, torch.float64).reshape(-1)
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
    n = un.numel()
    if n >= 100:
        s = un.sort().values
        i = torch.arange(1, n + 1, dtype=torch.float64, device=s.device)
        dist = float(torch.maximum(i / n - s, s - (i - 1) / n).max())
        allowed = _eps(n, 1.0) + rho * upper / (upper - lower)
        if dist > allowed:
            return f"argument noise: slopes are not uniform on [{lower:g}, {upper:g}]: CDF off by {dist:.4g} (allowed {allowed:.3g})"
    row = a.shape[-1] if a.dim() else 1
    message = _uncorrelated(torch.where(pos, 0.0, u - 0.5), 0.5, row)
    return f"argument noise: {message}" if message else None


def RANDOM(case):  # noqa: N802 - the judge's flag, per case: training draws new slopes every call
    return bool(case.params["training"])
