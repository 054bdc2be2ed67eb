"""Complementary error function, elementwise: `aten::erfc` (default overload).

out[i] = erfc(self[i]) = 1 - erf(x) = (2 / sqrt(pi)) * integral from x to inf of exp(-t^2) dt.

- erfc(-inf) = 2, erfc(0) = 1, erfc(+inf) = 0, NaN gives NaN. For large positive x the
  result is tiny (erfc(4) is about 1.5e-8, erfc(10) about 2e-45, a float32 subnormal);
  computing 1 - erf(x) there cancels, a proper implementation keeps relative accuracy
  (the comparison's absolute tolerance, 1e-4 x the RMS of the expected output, is lenient
  on tiny results).
- Compute half-precision inputs in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `erfc` (aten::erfc(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads (erfc.int, erfc.float, erfc.Scalar).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def erfc(self: torch.Tensor) -> torch.Tensor:
    """aten::erfc(Tensor self) -> Tensor"""
'''

# Special values: both tails, zero, the neighbourhood of 0.5, infinities and NaN.
EDGE = [0.0, -0.0, 1e-20, 0.4999, 0.5, 0.5001, -0.5, 1.0, -1.0, 2.5, 4.0, -4.0, 9.0, 10.5, 30.0,
        -30.0, float("inf"), float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="normal", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-f16", "smoke", [5, 17], "float16", dist="edge"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16", "check", [4096, 257], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("tail-f32", "check", [65537], dist="tail"),
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
        low = 0 if dtype == torch.uint8 else -5
        return torch.randint(low, 6, shape, generator=gen).to(dtype)
    if dist == "tail":  # uniform on [-1, 9]: the right tail down to 4e-37
        return (torch.rand(shape, generator=gen) * 10 - 1).to(dtype)
    return (torch.randn(shape, generator=gen) * 1.5).to(dtype)


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


reference = torch.ops.aten.erfc.default
