"""Insert a dimension of size 1 as a view: `aten::unsqueeze` (default overload).

Returns a view of `self` (no copy) with a new dimension of size 1 at position `dim`; the
other dims keep their sizes and strides, and the storage offset is kept.

- `dim` is in `[-self.dim() - 1, self.dim()]`; a negative `dim` means
  `dim + self.dim() + 1` (so -1 appends a last dim). A 0-d tensor becomes shape [1].
- `self` can be non-contiguous (transposed, sliced), empty or have a storage offset. Any
  dtype. The new dim's stride is free (only strides of dims longer than 1 are checked).
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
- PyTorch's `unsqueeze` is not allowed here: build the view yourself (with `as_strided`
  or `view`, for example).
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `unsqueeze`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def unsqueeze(self: torch.Tensor, dim: int) -> torch.Tensor:
    """aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is this call: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::unsqueeze",)


def _case(name, tag, shape, dim, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, dtype=dtype, layout=layout))


CASES = [
    _case("smoke-front", "smoke", [5, 37], 0),
    _case("smoke-last-f16-transposed", "smoke", [9, 6], -1, "float16", "transposed"),
    _case("smoke-scalar-int", "smoke", [], 0, "int64"),
    _case("mask-heads-bf16", "check", [2, 77, 77], 1, "bfloat16"),
    _case("middle-negative", "check", [4, 5, 6], -2),
    _case("end", "check", [4, 5, 6], 3, "int32"),
    _case("sliced", "check", [12, 40], 1, "float16", "sliced"),
    _case("transposed-front", "check", [65, 33], -3, "float32", "transposed"),
    _case("scalar-negative", "check", [], -1, "float32"),
    _case("empty", "check", [0, 5], 1),
    _case("bool", "check", [33, 3], 2, "bool"),
    _case("bench-bf16", "bench", [64, 4096, 1024], 1, "bfloat16"),
    _case("bench-f32", "bench", [8192, 8192], -1, "float32", "transposed"),
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
    return dict(self=x, dim=p["dim"])


reference = torch.ops.aten.unsqueeze.default


compare = views.compare
