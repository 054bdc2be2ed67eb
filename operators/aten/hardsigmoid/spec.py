"""Hard sigmoid activation, elementwise: `aten::hardsigmoid` (default overload).

out[i] = min(max(x + 3, 0), 6) / 6, x = self[i]: 0 for x <= -3, 1 for x >= 3, linear
(x / 6 + 1/2) in between.

- +-inf give 1 and 0; NaN gives NaN (the clamps must not swallow it).
- Dtypes: float16, bfloat16 and float32 (the result keeps the dtype); compute half-precision
  inputs in float32 and round once. Integer, bool, float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `hardsigmoid` (aten::hardsigmoid(Tensor self) -> Tensor). Not
required: the `out=` variant and the in-place `hardsigmoid_`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def hardsigmoid(self: torch.Tensor) -> torch.Tensor:
    """aten::hardsigmoid(Tensor self) -> Tensor"""
'''

# Special values: the kinks at -3 and 3 and their neighbours, zeros, infinities and NaN.
EDGE = [0.0, -0.0, -3.0, 3.0, -3.0001, 3.0001, -2.9999, 2.9999, 1.5, -1.5, 100.0, -100.0,
        float("inf"), float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="normal", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-bf16", "smoke", [5, 17], "bfloat16", dist="edge"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16-mlp", "check", [512, 3073], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-f16", "check", [17, 5], "float16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-bf16", "check", [300, 257], "bfloat16", layout="strided"),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
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
    return (torch.randn(shape, generator=gen) * 3).to(dtype)


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


reference = torch.ops.aten.hardsigmoid.default
