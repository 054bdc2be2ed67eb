"""A slice of one dimension as a view: `aten::narrow` (overloads `default` and `Tensor`).

Returns a view of `self` (no copy) that keeps indices `start .. start + length - 1` of
dimension `dim` and everything of the other dims: the same as `self[..., start:start +
length, ...]` along `dim`.

- `dim` may be negative (counted from the end). `start` may be negative, meaning
  `start + self.shape[dim]`; then `0 <= start` and `start + length <= self.shape[dim]`.
  `length` may be 0 (an empty view).
- `narrow_Tensor`: `start` is a 0-d integer tensor (on `self`'s device) instead of an
  int; reading it on the host (`.item()`) is fine.
- `self` can be non-contiguous (transposed, sliced) or have a storage offset; the result
  keeps all of `self`'s strides and moves the storage offset by `start * stride[dim]`.
  Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
- Build the view from its sizes, strides and offset yourself (with `as_strided`, for
  example): PyTorch's `narrow`, slicing (`aten::slice`), `split`, `split_with_sizes`,
  `unbind` and `select` are not allowed here.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry points: `narrow` and `narrow_Tensor`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def narrow(self: torch.Tensor, dim: int, start: int, length: int) -> torch.Tensor:
    """aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"""


def narrow_Tensor(self: torch.Tensor, dim: int, start: torch.Tensor, length: int) -> torch.Tensor:
    """aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = (
    "aten::narrow",
    "aten::slice",
    "aten::split",
    "aten::split_with_sizes",
    "aten::unbind",
    "aten::select",
)


def _case(
    name, tag, shape, dim, start, length, dtype="float32", layout="contiguous", tensor_start=False
):
    params = dict(shape=shape, dim=dim, start=start, length=length, dtype=dtype, layout=layout)
    return Case(name, tag, params, entry="narrow_Tensor" if tensor_start else "narrow")


CASES = [
    _case("smoke-cols", "smoke", [5, 37], 1, 3, 20),
    _case("smoke-rows-f16-neg-dim", "smoke", [9, 6], -2, 2, 4, "float16"),
    _case("smoke-tensor-start-int", "smoke", [4, 10], 1, 7, 3, "int64", tensor_start=True),
    _case("qkv-split-bf16", "check", [2, 128, 3 * 768], -1, 768, 768, "bfloat16"),
    _case("kv-cache-prefix", "check", [2, 8, 512, 64], 2, 0, 77, "float16"),
    _case("negative-start", "check", [40, 33], 0, -10, 10),
    _case("transposed", "check", [65, 33], 1, 5, 20, "float32", "transposed"),
    _case("sliced-self", "check", [12, 40], 1, 3, 10, "float16", "sliced"),
    _case("zero-length", "check", [6, 7], 1, 7, 0),
    _case("full-length", "check", [6, 7], 0, 0, 6, "int32"),
    _case("1d", "check", [1000], 0, 999, 1, "bool"),
    _case("tensor-start-negative", "check", [3, 50, 4], 1, -20, 15, "bfloat16", tensor_start=True),
    _case(
        "tensor-start-transposed",
        "check",
        [30, 20],
        0,
        4,
        9,
        "float32",
        "transposed",
        tensor_start=True,
    ),
    _case("bench-qkv", "bench", [8, 2048, 3 * 4096], 2, 4096, 4096, "bfloat16"),
    _case("bench-rows", "bench", [65536, 1024], 0, 1024, 32768, "float32", tensor_start=True),
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
    start = torch.tensor(p["start"]).to(device) if case.entry == "narrow_Tensor" else p["start"]
    return dict(self=x, dim=p["dim"], start=start, length=p["length"])


reference = {"narrow": torch.ops.aten.narrow.default, "narrow_Tensor": torch.ops.aten.narrow.Tensor}


compare = views.compare
