"""Broadcast a tensor to another's shape as a view: `aten::expand_as` (default overload).

Returns a view of `self` (no copy) with the shape of `other`, where size-1 dimensions are
repeated by giving them stride 0. Only `other.shape` matters: its values, dtype, strides
and device play no part.

- `other` may have more dims than `self`: the new ones are added in front (they get
  stride 0). Aligning from the right, every dim of `self` must either equal `other`'s
  size or be 1 (then broadcast with stride 0).
- `self` can be 0-d, empty, non-contiguous (transposed, sliced) or have a storage offset;
  dims that are not broadcast keep their stride. Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); neither input may be modified.
- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `expand`, `expand_as` and `broadcast_to` are not allowed here.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `expand_as`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 2

SIGNATURES = '''
def expand_as(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::expand", "aten::expand_as", "aten::broadcast_to")


def _case(name, tag, shape, other, dtype="float32", layout="contiguous", other_dtype="float32"):
    return Case(
        name,
        tag,
        dict(shape=shape, other=other, dtype=dtype, layout=layout, other_dtype=other_dtype),
    )


CASES = [
    _case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _case("smoke-new-dims-f16", "smoke", [3, 1], [2, 3, 4], "float16"),
    _case("smoke-scalar-int", "smoke", [], [3, 4], "int64", other_dtype="bfloat16"),
    _case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool", other_dtype="float16"),
    _case(
        "grad-like-bf16", "check", [1, 128, 1], [16, 128, 64], "bfloat16", other_dtype="bfloat16"
    ),
    _case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _case("same-shape", "check", [5, 6], [5, 6], "int32"),
    _case("to-empty", "check", [1, 6], [0, 6]),
    _case("scalar-to-scalar", "check", [], []),
    _case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 128, 4096], "bool"),
    _case("bench-bf16", "bench", [1, 4096, 1], [64, 4096, 1024], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    if p["layout"] == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif p["layout"] == "sliced":
        shape[-1] *= 2
    x = torch.randn(shape, generator=gen) * 10
    x = ((x > 0) if dtype == torch.bool else x.to(dtype)).to(device)
    if p["layout"] == "transposed":
        x = x.transpose(-2, -1)
    elif p["layout"] == "sliced":
        x = x[..., 1::2]
    # other only lends its shape: a broadcast tensor keeps the bench's memory small
    other = torch.randn([1] * len(p["other"]), generator=gen).to(getattr(torch, p["other_dtype"]))
    other = other.to(device).expand(p["other"])
    return dict(self=x, other=other)


reference = torch.ops.aten.expand_as.default


compare = views.compare
