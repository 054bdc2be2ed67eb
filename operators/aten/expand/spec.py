"""Broadcast a tensor to a larger shape as a view: `aten::expand` (default overload).

Returns a view of `self` (no copy) with shape `size`, where size-1 dimensions are
repeated by giving them stride 0.

- `size` may have more dims than `self`: the new ones are added in front (they get
  stride 0). Aligning from the right, every dim of `self` must either equal the target
  size or be 1 (then broadcast with stride 0). A target entry of -1 keeps `self`'s size
  for that dim (not allowed for the new leading dims). `implicit` has no effect on the
  result.
- `self` can be 0-d, empty, non-contiguous (transposed, sliced) or have a storage offset;
  dims that are not broadcast keep their stride. Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `expand`, `expand_as` and `broadcast_to` are not allowed here.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `expand`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def expand(self: torch.Tensor, size: list[int], *, implicit: bool = False) -> torch.Tensor:
    """aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::expand", "aten::expand_as", "aten::broadcast_to")


def _case(name, tag, shape, size, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, size=size, dtype=dtype, layout=layout))


CASES = [
    _case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _case("smoke-new-dims-f16", "smoke", [3, 1], [2, -1, 4], "float16"),
    _case("smoke-scalar-int", "smoke", [], [3, 4], "int64"),
    _case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool"),
    _case("kv-heads-bf16", "check", [4, 8, 1, 128, 64], [4, 8, 4, 128, 64], "bfloat16"),
    _case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _case("same-shape", "check", [5, 6], [5, 6]),
    _case("all-minus-one", "check", [5, 1, 6], [-1, -1, -1], "int32"),
    _case("to-empty", "check", [1, 6], [0, 6]),
    _case("empty-self", "check", [0, 1], [0, 9]),
    _case("scalar-to-scalar", "check", [], []),
    _case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 4096, 4096], "bool"),
    _case("bench-kv-bf16", "bench", [8, 8, 1, 2048, 128], [8, 8, 4, 2048, 128], "bfloat16"),
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
    return dict(self=x, size=list(p["size"]))


reference = torch.ops.aten.expand.default


compare = views.compare
