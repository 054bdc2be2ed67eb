"""Transpose of a matrix as a view: `aten::t` (default overload).

Returns a view of `self` (no copy): for a 2-D tensor its transpose (sizes and strides
of the two dims swapped); for a 0-d or 1-D tensor a view with the same shape and
strides (nothing to swap). Tensors of more than 2 dims are an error (not tested).

- `self` can be non-contiguous (already transposed, sliced) or have a storage offset;
  the storage offset is kept. Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `t`, `transpose` and `permute` are not allowed here.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `t`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def t(self: torch.Tensor) -> torch.Tensor:
    """aten::t(Tensor(a) self) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::t", "aten::transpose", "aten::permute")


def _case(name, tag, shape, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout))


CASES = [
    _case("smoke-matrix", "smoke", [5, 37]),
    _case("smoke-f16-transposed", "smoke", [9, 6], "float16", "transposed"),
    _case("smoke-1d-int", "smoke", [10], "int64"),
    _case("weight-bf16", "check", [3072, 768], "bfloat16"),
    _case("sliced", "check", [12, 40], "float16", "sliced"),
    _case("row-block", "check", [64, 33], "float32", "row_block"),
    _case("scalar", "check", []),
    _case("1d-f32", "check", [4097]),
    _case("column", "check", [77, 1], "int32"),
    _case("empty", "check", [0, 5]),
    _case("bool", "check", [33, 3], "bool"),
    _case("bench-weight-bf16", "bench", [11008, 4096], "bfloat16"),
    _case("bench-weight-f32", "bench", [4096, 4096], "float32", "transposed"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    if p["layout"] == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif p["layout"] == "sliced":
        shape[-1] *= 2
    elif p["layout"] == "row_block":
        shape[0] += 10
    x = torch.randn(shape, generator=gen) * 10
    x = ((x > 0) if dtype == torch.bool else x.to(dtype)).to(device)
    if p["layout"] == "transposed":
        x = x.transpose(-2, -1)
    elif p["layout"] == "sliced":
        x = x[..., 1::2]
    elif p["layout"] == "row_block":
        x = x[7 : 7 + p["shape"][0]]
    return dict(self=x)


reference = torch.ops.aten.t.default


compare = views.compare
