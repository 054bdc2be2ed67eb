"""Base-10 logarithm, elementwise: `aten::log10` (default overload).

out[i] = log10(self[i]).

- log10(0) = -inf (either sign of zero), log10(+inf) = +inf, x < 0 (including -inf) gives
  NaN, NaN gives NaN. Subnormal float32 inputs are not tested.
- Compute half-precision inputs in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `log10` (aten::log10(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (log10.int, log10.float, log10.complex,
log10.Scalar).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def log10(self: torch.Tensor) -> torch.Tensor:
    """aten::log10(Tensor self) -> Tensor"""
'''

# Special values: zeros, powers of ten, values near 1, the float32 extremes, the NaN
# domain and infinities.
EDGE = [0.0, -0.0, 1.0, 10.0, 100.0, 0.001, 0.999999, 1.000001, 1.5e-38, 3.4e38, 2.0, -1.0, -1e-10,
        float("inf"), float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="normal", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-f16", "smoke", [5, 17], "float16", dist="edge"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16", "check", [4096, 257], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("wide-range-f32", "check", [65537], dist="wide"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-bf16", "check", [17, 5], "bfloat16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided"),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
    _case("int64", "check", [1000, 37], "int64", dist="int"),
    _case("int32", "check", [4099], "int32", dist="int"),
    _case("uint8", "check", [257, 3], "uint8", dist="int"),
    _case("bool", "check", [129, 7], "bool", dist="int"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
    _case("bench-f16", "bench", [32, 1024, 1024], "float16"),
]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    if dist == "edge":
        vals = torch.tensor(EDGE, dtype=torch.float32)
        idx = torch.randperm(max(n, 1), generator=gen)[:n] % len(EDGE)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "int":
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        low = 0 if dtype == torch.uint8 else -3
        high = 256 if dtype == torch.uint8 else 1_000_000
        return torch.randint(low, high, shape, generator=gen).to(dtype)
    if dist == "wide":  # 10**u for u in [-37, 38]
        return (10.0 ** (torch.rand(shape, generator=gen).double() * 75 - 37)).to(dtype)
    # positive, spread over a few decades
    return torch.exp(torch.randn(shape, generator=gen) * 3).to(dtype)


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
    x = _draw(p["dist"], base, getattr(torch, p["dtype"]), gen).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    elif layout == "expanded":
        x = x.expand(shape)
    return dict(self=x)


reference = torch.ops.aten.log10.default
