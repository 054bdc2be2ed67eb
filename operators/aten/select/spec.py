"""One index of one dimension as a view: `aten::select` (overload `int`).

Returns a view of `self` (no copy) with dimension `dim` removed, holding the elements at
position `index` along it: the same as `self[..., index, ...]` along `dim`.

- `dim` may be negative (counted from the end); `index` may be negative, meaning
  `index + self.shape[dim]`; then `0 <= index < self.shape[dim]`.
- Selecting from a 1-D tensor gives a 0-d view. `self` can be non-contiguous (transposed,
  sliced) or have a storage offset; the result keeps the strides of the remaining dims
  and moves the storage offset by `index * stride[dim]`. Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
- Build the view from its sizes, strides and offset yourself (with `as_strided`, for
  example): PyTorch's `select`, slicing (`aten::slice`), `narrow` and `unbind` are not
  allowed here.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `select_int`. Not required: `select.Dimname` and `select.t` (a
Python list).
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def select_int(self: torch.Tensor, dim: int, index: int) -> torch.Tensor:
    """aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::select", "aten::slice", "aten::narrow", "aten::unbind")


def _case(name, tag, shape, dim, index, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, index=index, dtype=dtype, layout=layout))


CASES = [
    _case("smoke-row", "smoke", [5, 37], 0, 3),
    _case("smoke-col-f16-neg", "smoke", [9, 6], -1, -2, "float16"),
    _case("smoke-1d-int", "smoke", [10], 0, 7, "int64"),
    _case("cls-token-bf16", "check", [8, 197, 768], 1, 0, "bfloat16"),
    _case("last-token", "check", [4, 77, 512], 1, -1, "float16"),
    _case("qkv-unbind", "check", [3, 2, 12, 64, 64], 0, 2),
    _case("transposed", "check", [65, 33], 1, 32, "float32", "transposed"),
    _case("sliced-self", "check", [12, 40], 0, 11, "float16", "sliced"),
    _case("middle-dim-int32", "check", [6, 7, 8], -2, 3, "int32"),
    _case("bool", "check", [33, 3], 1, 1, "bool"),
    _case("empty-rest", "check", [4, 0, 5], 0, 2),
    _case("bench-cls", "bench", [256, 577, 1024], 1, 0, "bfloat16"),
    _case("bench-qkv", "bench", [3, 16, 32, 1024, 128], 0, 1, "float16"),
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
    return dict(self=x, dim=p["dim"], index=p["index"])


reference = torch.ops.aten.select.int


compare = views.compare
