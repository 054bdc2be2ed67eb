"""Polygamma function, elementwise: `aten::polygamma` (default overload).

out[i] = psi^(n)(x), the n-th derivative of the digamma function psi = Gamma' / Gamma, at
x = self[i]. n = 0 is digamma, n = 1 trigamma; for n >= 1,
psi^(n)(x) = (-1)^(n+1) n! * sum over k >= 0 of 1 / (x + k)^(n+1).

- `n` is a Python int >= 0 (the tests use 0 to 4); the same n applies to every element.
- Useful facts: psi^(n)(x + 1) = psi^(n)(x) + (-1)^n n! / x^(n+1), and for large x the
  asymptotic expansions psi(x) ~ ln x - 1/(2x) - sum B_2k / (2k x^2k) and
  psi^(n)(x) ~ (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum B_2k (2k+n-1)! / ((2k)! x^(2k+n))]
  (B_2k the Bernoulli numbers 1/6, -1/30, 1/42, ...). Triton has no lgamma or digamma.
- Domain: every real x except the poles x = 0, -1, -2, ... Negative non-integer x is valid
  (digamma satisfies psi(x) = psi(1 - x) - pi / tan(pi x)). Digamma at the poles follows
  PyTorch: -inf at +0, +inf at -0, NaN at negative integers and at -inf; psi(+inf) = +inf;
  NaN gives NaN. For n >= 1, values at the poles and at +-inf are not tested (PyTorch's
  kernels are inconsistent there), nor are negative inputs within 0.1 of an integer.
  Results that overflow float32 (n! / x^(n+1) for tiny x) are +-inf.
- Compute half-precision inputs in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `polygamma` (aten::polygamma(int n, Tensor self) -> Tensor). Not
required: the `out=` variant and the in-place `polygamma_`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def polygamma(n: int, self: torch.Tensor) -> torch.Tensor:
    """aten::polygamma(int n, Tensor self) -> Tensor"""
'''

# Special values (n >= 1 uses the finite, non-pole ones only): tiny and huge arguments,
# the digamma root near 1.4616, half-integers of both signs, and for digamma its poles,
# infinities and NaN.
EDGE = [1e-30, 1e-4, 0.5, 1.0, 1.4616321, 2.0, 9.99, 10.0, 10.01, 1e4, 1e30, -0.5, -1.5, -2.25,
        -3.75]
EDGE_DIGAMMA = EDGE + [0.0, -0.0, -1.0, -2.0, float("inf"), float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="positive", seed=0, n=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist, n=n), seed=seed)


CASES = [
    _case("smoke-digamma-f32", "smoke", [7, 33], n=0),
    _case("smoke-trigamma-edge-f32", "smoke", [3, 17], dist="edge", n=1),
    _case("digamma-f32", "check", [512, 1000], n=0),
    _case("trigamma-f32", "check", [512, 1000], n=1),
    _case("n2-f32", "check", [256, 1000], n=2),
    _case("n3-f32", "check", [256, 1000], n=3),
    _case("n4-f32", "check", [128, 1000], n=4),
    _case("digamma-neg-f32", "check", [65537], dist="negative", n=0),
    _case("trigamma-neg-f32", "check", [65537], dist="negative", n=1),
    _case("n2-neg-f32", "check", [65537], dist="negative", n=2),
    _case("n3-neg-f32", "check", [65537], dist="negative", n=3),
    _case("digamma-edge-f32", "check", [34, 9], dist="edge", n=0),
    _case("trigamma-edge-f32", "check", [34, 9], dist="edge", n=1),
    _case("n2-edge-f32", "check", [34, 9], dist="edge", n=2),
    _case("n3-edge-f32", "check", [34, 9], dist="edge", n=3),
    _case("digamma-f16", "check", [2048, 257], "float16", n=0),
    _case("trigamma-bf16", "check", [3, 500, 129], "bfloat16", n=1),
    _case("n2-f16", "check", [1000, 129], "float16", n=2),
    _case("digamma-edge-bf16", "check", [17, 5], "bfloat16", dist="edge", n=0),
    _case("transposed-f32", "check", [511, 513], layout="transposed", n=1),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided", n=0),
    _case("expanded-f32", "check", [64, 1000], layout="expanded", n=2),
    _case("scalar-f32", "check", [], n=1),
    _case("empty-f32", "check", [0, 16], n=0),
    _case("digamma-int64", "check", [1000, 37], "int64", dist="int", n=0),
    _case("trigamma-int32", "check", [4099], "int32", dist="int", n=1),
    _case("digamma-bool", "check", [129, 7], "bool", dist="int", n=0),
    _case("bench-digamma-f32", "bench", [8192, 8192], n=0),
    _case("bench-trigamma-f32", "bench", [8192, 8192], n=1),
    _case("bench-digamma-bf16", "bench", [16, 2048, 4096], "bfloat16", n=0),
    _case("bench-n3-f16", "bench", [32, 1024, 1024], "float16", n=3),
]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator, n: int) -> torch.Tensor:
    count = 1
    for s in shape:
        count *= s
    if dist == "edge" and n > 0:
        vals = torch.tensor(EDGE, dtype=torch.float32)
        idx = torch.randperm(max(count, 1), generator=gen)[:count] % len(EDGE)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "edge" and n == 0:
        vals = torch.tensor(EDGE_DIGAMMA, dtype=torch.float32)
        idx = torch.randperm(max(count, 1), generator=gen)[:count] % len(vals)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "int":  # digamma has poles at 0 and the negative integers
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        return torch.randint(-2 if n == 0 else 1, 100, shape, generator=gen).to(dtype)
    if dist == "negative":  # -k - f, k in 0..2, f in [0.1, 0.9]: away from the poles
        k = torch.randint(0, 3, shape, generator=gen)
        return (-k - 0.1 - 0.8 * torch.rand(shape, generator=gen)).to(dtype)
    # positive, from about 0.05 to 20 and beyond (concentration parameters and the like)
    return torch.exp(torch.randn(shape, generator=gen) * 1.2).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    base = list(shape)
    if layout == "transposed":
        base[-2], base[-1] = shape[-1], shape[-2]
    elif layout == "strided":
        base[-1] = 2 * shape[-1]
    elif layout == "expanded":
        base[-2] = 1
    # draw on the CPU, move, then take the view, so that the layout survives the move
    x = _draw(p["dist"], base, getattr(torch, p["dtype"]), gen, p["n"]).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    elif layout == "expanded":
        x = x.expand(shape)
    return dict(n=p["n"], self=x)


def reference(n, self):
    return torch.ops.aten.polygamma.default(n, self)
