"""Bernoulli samples: `aten::bernoulli` (overloads `default`, `p` and `Tensor`).

Returns a new tensor with the shape and dtype of `self` whose elements are independent
random draws: 1 with probability p, else 0 (True/False for a bool result).

- `bernoulli(self)`: `self` holds the probabilities (float16, bfloat16, float32 or
  float64, each in [0, 1]); element i is 1 with probability `self[i]`.
- `bernoulli_p(self, p)`: one probability `p` (a Python float in [0, 1]) for every
  element; `self` only gives shape, dtype and device (any dtype: floating, int64, uint8,
  bool); its values are not read.
- `bernoulli_Tensor(self, p)`: probabilities from the tensor `p`, broadcast to
  `self.shape` (p may have fewer dims or size-1 dims, and its own floating dtype); `self`
  only gives shape, dtype and device.
- A probability of exactly 0 must always give 0, and exactly 1 always 1 (e.g. draw u
  uniform in [0, 1) in float32 and return u < p).
- `self` and `p` may be non-contiguous, 0-d or empty. The result may have any strides.
  Inputs must not be modified.
- Randomness: `generator` is always None here. Make the random stream in the kernel (for
  example Triton's Philox `tl.rand(seed, offsets)` with a distinct offset per element)
  from a seed you choose on the host, e.g. from `torch.initial_seed()` and a per-call
  counter, so that two calls give different samples. PyTorch's random ops are not
  allowed, and host-side randomness must not produce the samples themselves.
- Checked statistically, with a total false-failure rate below 1e-6: values are 0/1
  with exactly 0 or 1 where p is 0 or 1; the frequency of ones matches p within bins of
  p (Hoeffding bounds); samples at several distances apart (1, 2, 3, the row length and
  powers of two) are uncorrelated. Results need not equal PyTorch's own draws.

Required entry points: `bernoulli`, `bernoulli_p` and `bernoulli_Tensor`. Not required:
the `out=` overloads and the in-place `bernoulli_`.
"""

import math

import torch

from kgb.operators import Case

VERSION = 2
RANDOM = True  # every call must draw new samples: the judge calls twice on the same inputs

SIGNATURES = '''
def bernoulli(self: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"""


def bernoulli_p(self: torch.Tensor, p: float, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"""


def bernoulli_Tensor(self: torch.Tensor, p: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor"""
'''


def _case(
    name,
    tag,
    entry,
    shape,
    dtype="float32",
    p=None,
    p_shape=None,
    p_dtype="float32",
    layout="contiguous",
):
    params = dict(shape=shape, dtype=dtype, p=p, p_shape=p_shape, p_dtype=p_dtype, layout=layout)
    return Case(name, tag, params, entry=entry)


CASES = [
    _case("smoke-probs-f32", "smoke", "bernoulli", [64, 64]),
    _case("smoke-p-f16", "smoke", "bernoulli_p", [32, 128], "float16", p=0.3),
    _case("smoke-tensor-int64", "smoke", "bernoulli_Tensor", [16, 256], "int64", p_shape=[256]),
    _case("probs-f16", "check", "bernoulli", [256, 1024], "float16"),
    _case(
        "probs-bf16-transposed", "check", "bernoulli", [300, 777], "bfloat16", layout="transposed"
    ),
    _case("probs-f64", "check", "bernoulli", [100003], "float64"),
    _case("dropout-keep-f32", "check", "bernoulli_p", [512, 1023], "float32", p=0.9),
    _case("dropout-bf16", "check", "bernoulli_p", [8, 128, 257], "bfloat16", p=0.5),
    _case("p-bool", "check", "bernoulli_p", [65537, 3], "bool", p=0.125),
    _case("p-zero", "check", "bernoulli_p", [1000], "float32", p=0.0),
    _case("p-one-uint8", "check", "bernoulli_p", [1000], "uint8", p=1.0),
    _case("p-scalar-self", "check", "bernoulli_p", [], "float32", p=0.5),
    _case("p-empty", "check", "bernoulli_p", [0, 7], "float32", p=0.5),
    _case(
        "tensor-broadcast-rows",
        "check",
        "bernoulli_Tensor",
        [1024, 257],
        "float16",
        p_shape=[1024, 1],
    ),
    _case(
        "tensor-f64-p-sliced",
        "check",
        "bernoulli_Tensor",
        [512, 300],
        "float32",
        p_shape=[512, 300],
        p_dtype="float64",
        layout="sliced",
    ),
    _case("tensor-bool", "check", "bernoulli_Tensor", [4, 65536], "bool", p_shape=[4, 65536]),
    _case("bench-probs-f32", "bench", "bernoulli", [8192, 8192]),
    _case("bench-dropout-bf16", "bench", "bernoulli_p", [16, 2048, 4096], "bfloat16", p=0.9),
    _case(
        "bench-tensor-f16",
        "bench",
        "bernoulli_Tensor",
        [4096, 11008],
        "float16",
        p_shape=[4096, 11008],
    ),
]


def _probabilities(shape, dtype, gen):
    """Uniform in [0, 1] with exact 0s and 1s sprinkled in."""
    p = torch.rand(shape, generator=gen, dtype=torch.float64)
    pick = torch.rand(shape, generator=gen)
    p = torch.where(pick < 0.02, 0.0, torch.where(pick > 0.98, 1.0, p))
    return p.to(dtype)


def _layout(shape, layout, make):
    """make(shape) with `layout` applied, keeping the logical shape."""
    shape = list(shape)
    if layout == "transposed" and len(shape) >= 2:
        shape[-2], shape[-1] = shape[-1], shape[-2]
        return make(shape).transpose(-2, -1)
    if layout == "sliced" and shape:
        shape[-1] *= 2
        return make(shape)[..., 1::2]
    return make(shape)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    if case.entry == "bernoulli":
        x = _layout(p["shape"], p["layout"], lambda s: _probabilities(s, dtype, gen).to(device))
        return dict(self=x)
    filler = lambda s: (torch.randn(s, generator=gen) > 0).to(dtype).to(device)
    x = _layout(p["shape"], p["layout"], filler)
    if case.entry == "bernoulli_p":
        return dict(self=x, p=p["p"])
    probs = _layout(
        p["p_shape"],
        p["layout"],
        lambda s: _probabilities(s, getattr(torch, p["p_dtype"]), gen).to(device),
    )
    return dict(self=x, p=probs)


reference = {
    "bernoulli": torch.ops.aten.bernoulli.default,
    "bernoulli_p": torch.ops.aten.bernoulli.p,
    "bernoulli_Tensor": torch.ops.aten.bernoulli.Tensor,
}

# Every statistical test below fails a correct sampler with probability at most ALPHA
# (Hoeffding's inequality: exact bounds, no normal approximation). A case runs at most
# 10 + 15 tests and an evaluation at most ~20 case runs, so a correct solution fails an
# evaluation with probability below 1e-7.
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
    # float64 statistics of a GPU-sized output are slow on the host
    x = a.detach().to(e.device, torch.float64).reshape(-1)
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
    row = a.shape[-1] if a.dim() else 1
    message = _uncorrelated(x - p, 1.0, row)
    return f"return value: {message}" if message else None
