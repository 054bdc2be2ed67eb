"""Fill a tensor in place with exponential samples: `aten::exponential_` (default overload).

Overwrites every element of `self` with an independent draw from the exponential
distribution with rate `lambd` (density `lambd * exp(-lambd * x)` for x >= 0, mean
`1 / lambd`) and returns `self` itself (the same tensor object, or at least a tensor with
the same storage, offset, shape and strides). The old values of `self` are not read.

- `lambd` is a positive Python float. `self` is float16, bfloat16, float32 or float64, of
  any rank (0-d and empty included) and any non-overlapping strides (transposed, strided
  slice); only the elements `self` views may be written, the rest of its storage must
  stay untouched.
- Samples must be finite and >= 0. Draw in float32 (or wider) and round once to the
  dtype, e.g. `-log(1 - u) / lambd` with u uniform in [0, 1).
- Randomness: `generator` is always None here. Make the random stream in the kernel (for
  example Triton's Philox `tl.rand(seed, offsets)` with a distinct offset per element)
  from a seed you choose on the host, e.g. from `torch.initial_seed()` and a per-call
  counter, so that two calls give different samples. PyTorch's random ops are not
  allowed, and host-side randomness must not produce the samples themselves.
- Checked statistically, with a total false-failure rate below 1e-6: support; the
  empirical distribution of `1 - exp(-lambd * x)` is uniform (Dvoretzky-Kiefer-Wolfowitz
  bound, with an allowance for rounding to the dtype); samples at several distances
  apart (1, 2, 3, the row length and powers of two) are uncorrelated. Results need not
  equal PyTorch's own draws.

Required entry point: `exponential_`. Not required: `exponential.out`.
"""

import math

import torch

from kgb.aten_families.views import same_outside
from kgb.operators import Case

VERSION = 2
RANDOM = True  # every call must draw new samples: the judge calls twice on the same inputs

SIGNATURES = '''
def exponential_(self: torch.Tensor, lambd: float = 1.0, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)


def _case(name, tag, shape, dtype="float32", lambd=1.0, layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dtype=dtype, lambd=lambd, layout=layout))


CASES = [
    _case("smoke-f32", "smoke", [64, 64]),
    _case("smoke-f16-rate", "smoke", [4096], "float16", 2.5),
    _case("smoke-bf16-sliced", "smoke", [32, 100], "bfloat16", 0.5, "sliced"),
    _case("f32-large", "check", [512, 1023]),
    _case("f16", "check", [256, 1024], "float16", 4.0),
    _case("bf16-transposed", "check", [300, 777], "bfloat16", 0.25, "transposed"),
    _case("f64", "check", [100003], "float64", 1.5),
    _case("small-rate", "check", [200000], "float32", 1e-3),
    _case("large-rate", "check", [3, 65537], "float32", 1e4),
    _case("column-block", "check", [1024, 200], "float32", 1.0, "column_block"),
    _case("scalar", "check", [], "float32", 1.0),
    _case("empty", "check", [0, 16], "float32", 1.0),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [4096, 11008], "bfloat16", 2.0),
    _case("bench-f16", "bench", [16, 2048, 2048], "float16", 0.5),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    if layout == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif layout == "sliced":
        shape[-1] *= 2
    elif layout == "column_block":
        shape[-1] += 64
    # old contents: negative values, which no correct sample can leave behind
    x = (-1 - torch.rand(shape, generator=gen)).to(getattr(torch, p["dtype"])).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "sliced":
        x = x[..., 1::2]
    elif layout == "column_block":
        x = x[..., 32 : 32 + p["shape"][-1]]
    return dict(self=x, lambd=p["lambd"])


reference = torch.ops.aten.exponential_.default

# Every statistical test below fails a correct sampler with probability at most ALPHA
# (DKW with Massart's constant and Hoeffding's inequality: exact bounds). A case runs at
# most 16 tests and an evaluation at most ~20 case runs: a correct solution fails an
# evaluation with probability below 1e-7.
ALPHA = 1e-10
# Largest relative rounding error of one rounding to the dtype, doubled as an allowance
# for a draw rounded through float32 first; it moves the uniform CDF by at most that.
_ROUNDING = {
    torch.float16: 2.0**-10,
    torch.bfloat16: 2.0**-7,
    torch.float32: 2.0**-23,
    torch.float64: 2.0**-23,
}


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



def compare(actual, expected, case, inputs):
    ret, self_ = actual["return"], inputs["self"]
    if not isinstance(ret, torch.Tensor):
        return f"return value: expected self, got {type(ret).__name__}"
    if not (
        ret.untyped_storage().data_ptr() == self_.untyped_storage().data_ptr()
        and ret.storage_offset() == self_.storage_offset()
        and ret.shape == self_.shape
        and ret.stride() == self_.stride()
    ):
        return "return value: exponential_ must return self (the same storage, offset, shape and strides)"
    ref = expected["self"]
    if self_.dtype != ref.dtype or self_.shape != ref.shape:
        return "argument self: dtype or shape changed"
    # a view as large as its storage (self is non-overlapping) leaves nothing outside it
    covers_storage = self_.numel() * self_.itemsize == self_.untyped_storage().nbytes()
    if not covers_storage and not same_outside(self_, ref):
        return "argument self: storage outside the view of self was modified"
    if self_.numel() == 0:
        return None
    # on self's own device: a float64 sort of a GPU-sized output is slow on the host
    x = self_.detach().to(torch.float64).reshape(-1)
    if not bool((torch.isfinite(x) & (x >= 0)).all()):
        return "argument self: samples must be finite and >= 0"
    n = x.numel()
    u = -torch.expm1(-case.params["lambd"] * x)  # uniform on [0, 1) for a correct sampler
    if n >= 100:
        s = u.sort().values
        i = torch.arange(1, n + 1, dtype=torch.float64, device=x.device)
        dist = float(torch.maximum(i / n - s, s - (i - 1) / n).max())
        allowed = _eps(n, 1.0) + _ROUNDING[self_.dtype]
        if dist > allowed:
            return (
                f"argument self: not exponential with rate {case.params['lambd']}: the CDF is off by "
                f"{dist:.4g} (allowed {allowed:.3g})"
            )
    row = self_.shape[-1] if self_.dim() else 1
    message = _uncorrelated(u - 0.5, 0.5, row)
    return f"argument self: {message}" if message else None
