"""Inverse sine, elementwise: `aten::asin` (default overload).

out[i] = asin(self[i]), the angle y in [-pi/2, pi/2] with sin(y) = x.

- Domain: -1 <= x <= 1; asin(+-1) = +-pi/2. |x| > 1 (including +-inf) and NaN give NaN.
  The sign of zero need not be kept.
- Accuracy: relative accuracy is expected across the whole domain, near 0 (asin(x) is
  about x) and near +-1 (where the slope is infinite) alike. Triton has no asin
  primitive: build it from sqrt, polynomials and the like. Compute half-precision inputs
  in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `asin` (aten::asin(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (asin.int, asin.float, asin.complex,
asin.Scalar).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def asin(self: torch.Tensor) -> torch.Tensor:
    """aten::asin(Tensor self) -> Tensor"""
'''

# Special values: the ends of the domain, the neighbourhood of 0.5 (where a typical
# implementation switches formulas), tiny values, and the NaN domain.
EDGE = [0.0, -0.0, 1e-30, -1e-20, 1e-4, 0.4999, 0.5, 0.5001, -0.5, 0.9, 0.99999, 1.0, -1.0,
        1.0000001, -2.0, float("inf"), float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="domain", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-bf16", "smoke", [5, 17], "bfloat16", dist="edge"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16", "check", [4096, 257], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("near-one-f32", "check", [65537], dist="near_one"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-f16", "check", [17, 5], "float16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided"),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
    _case("int64", "check", [1000, 37], "int64", dist="int"),
    _case("int8", "check", [4099], "int8", dist="int"),
    _case("bool", "check", [129, 7], "bool", dist="int"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
    _case("bench-f16", "bench", [32, 1024, 1024], "float16"),
]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    if dist == "int":  # mostly -1, 0, 1; some 2 (NaN)
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        return torch.randint(-1, 3, shape, generator=gen).to(dtype)
    if dist == "edge":
        vals = torch.tensor(EDGE, dtype=torch.float32)
        idx = torch.randperm(max(n, 1), generator=gen)[:n] % len(EDGE)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "near_one":  # +-(1 - 10**u), u in [-8, 0]
        u = torch.rand(shape, generator=gen) * 8 - 8
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return (sign * (1 - 10.0 ** u.double())).to(dtype)
    # uniform on [-1.02, 1.02]: about 2% outside the domain (NaN results)
    return ((torch.rand(shape, generator=gen) * 2 - 1) * 1.02).to(dtype)


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
    x = _draw(p["dist"], base, getattr(torch, p["dtype"]), gen).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    elif layout == "expanded":
        x = x.expand(shape)
    return dict(self=x)


reference = torch.ops.aten.asin.default
