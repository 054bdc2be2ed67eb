"""The task texts and signatures of the sampling family (bernoulli, exponential_, poisson,
rrelu_with_noise): each member's own, since what they draw and how it is checked differ."""

TASKS = {
    "bernoulli": """\
Bernoulli samples: `aten::bernoulli` (overloads `default`, `p` and `Tensor`).

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
""",
    "exponential_": """\
Fill a tensor in place with exponential samples: `aten::exponential_` (default overload).

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
""",
    "poisson": """\
Poisson samples: `aten::poisson` (default overload).

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
""",
    "rrelu_with_noise": """\
Randomized leaky ReLU that records its slopes: `aten::rrelu_with_noise` (default overload).

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
""",
}

SIGNATURES = {
    "bernoulli": '''\
def bernoulli(self: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"""


def bernoulli_p(self: torch.Tensor, p: float, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"""


def bernoulli_Tensor(self: torch.Tensor, p: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor"""
''',
    "exponential_": '''\
def exponential_(self: torch.Tensor, lambd: float = 1.0, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)"""
''',
    "poisson": '''\
def poisson(self: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::poisson(Tensor self, Generator? generator=None) -> Tensor"""
''',
    "rrelu_with_noise": '''\
def rrelu_with_noise(self: torch.Tensor, noise: torch.Tensor, lower: float = 0.125, upper: float = 0.3333333333333333, training: bool = False, generator: torch.Generator | None = None) -> torch.Tensor:
    """aten::rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor"""
''',
}
