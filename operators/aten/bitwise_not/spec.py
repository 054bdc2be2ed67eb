"""Bitwise NOT, elementwise: `aten::bitwise_not` (default overload).

out[i] = ~self[i], in the dtype of `self`.
- Integer dtypes (int8, int16, int32, int64, uint8): every bit flipped; for signed
  integers that is -x - 1, for uint8 255 - x.
- Bool: logical not (True <-> False). Bool tensors store one byte per element, 0 or 1.
- Floating and complex inputs are rejected by PyTorch and not required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides), even where it equals the input; `self` must not be modified.

Required entry point: `bitwise_not` (aten::bitwise_not(Tensor self) -> Tensor). Not
required: the `out=` variant.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def bitwise_not(self: torch.Tensor) -> torch.Tensor:
    """aten::bitwise_not(Tensor self) -> Tensor"""
'''


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="int", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-int32", "smoke", [7, 33], "int32"),
    _case("smoke-bool", "smoke", [5, 17], "bool"),
    _case("smoke-uint8", "smoke", [5, 17], "uint8"),
    _case("int64-hidden", "check", [8, 128, 768], "int64"),
    _case("int32-transposed", "check", [257, 129], "int32", layout="transposed"),
    _case("int16", "check", [4099], "int16"),
    _case("int8-strided", "check", [129, 65], "int8", layout="strided"),
    _case("uint8", "check", [257, 3], "uint8"),
    _case("bool-mask", "check", [4, 1024, 1024], "bool"),
    _case("bool-transposed", "check", [1023, 513], "bool", layout="transposed"),
    _case("bool-expanded", "check", [64, 1000], "bool", layout="expanded"),
    _case("scalar-bool", "check", [], "bool"),
    _case("scalar-int64", "check", [], "int64"),
    _case("empty-int32", "check", [0, 16], "int32"),
    _case("bench-bool", "bench", [64, 4096, 4096], "bool"),
    _case("bench-int32", "bench", [8192, 8192], "int32"),
    _case("bench-int64", "bench", [4096, 8192], "int64"),
]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
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

    raise ValueError(dist)


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


reference = torch.ops.aten.bitwise_not.default
