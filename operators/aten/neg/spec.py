"""Negation, elementwise: `aten::neg` (default overload).

out[i] = -self[i], in the dtype of `self`.

- Floating dtypes float16, bfloat16, float32: the sign flips (NaN stays NaN; the sign of
  zero need not be kept).
- Integer dtypes (int8, int16, int32, int64, uint8) wrap around as two's complement: the
  most negative value maps to itself, and for uint8 -x is (256 - x) mod 256. Bool is
  rejected by PyTorch and not required; float64 and complex are not required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides), even where it equals the input; `self` must not be modified.

Required entry point: `neg` (aten::neg(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads (neg.int, neg.float, neg.complex, neg.Scalar).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def neg(self: torch.Tensor) -> torch.Tensor:
    """aten::neg(Tensor self) -> Tensor"""
'''

# Special values: signed zeros, the float extremes, subnormals, infinities and NaN.
EDGE = [0.0, -0.0, 1.0, -2.5, 3.4e38, -3.4e38, 1e-40, -1e-45, 65504.0, float("inf"), float("-inf"),
        float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="normal", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-int8", "smoke", [5, 17], "int8", dist="int"),

    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16", "check", [4096, 257], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-bf16", "check", [17, 5], "bfloat16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided"),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),

    _case("int64", "check", [1000, 37], "int64", dist="int"),
    _case("int32-transposed", "check", [257, 129], "int32", layout="transposed", dist="int"),
    _case("int16", "check", [4099], "int16", dist="int"),
    _case("int8", "check", [129, 65], "int8", dist="int"),
    _case("uint8", "check", [257, 3], "uint8", dist="int"),
    _case("scalar-int64", "check", [], "int64", dist="small"),

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
    if dist == "int":  # the whole range of the dtype, extremes included
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        info = torch.iinfo(dtype)
        x = torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64 if dtype != torch.uint8 else torch.int16).to(dtype)
        flat = x.reshape(-1)
        if flat.numel() >= 4:
            flat[:4] = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1]).to(dtype)
        return x
    if dist == "small":  # small integers
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        low = 0 if dtype == torch.uint8 else -100
        return torch.randint(low, 101, shape, generator=gen).to(dtype)

    return (torch.randn(shape, generator=gen) * 10).to(dtype)


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


reference = torch.ops.aten.neg.default
