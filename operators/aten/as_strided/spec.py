"""A view with explicit sizes and strides: `aten::as_strided` (default overload).

Returns a view of `self`'s storage (no copy) whose element at index (i0, i1, ...) is
the storage element `storage_offset + sum(i_k * stride[k])`.

- `size` and `stride` are lists of ints of equal length (`[]`/`[]` gives a 0-d view, a 0
  in `size` an empty one); strides are non-negative and may overlap (sliding windows) or
  be 0.
- `storage_offset` is absolute, counted in elements from the start of the storage, not
  from `self`'s first element; when None it is `self.storage_offset()`.
- `self` may itself be a non-contiguous view with a non-zero storage offset; its own
  sizes and strides play no part. The caller guarantees that every addressed element
  lies inside the storage.
- The result has `self`'s dtype and device and shares its storage: writing through it
  changes `self`. Nothing is computed, so this operator needs no Triton kernel (a
  solution may launch none); `self` must not be modified.
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.

Required entry point: `as_strided`.
"""

import torch

from kgb.aten_families import views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def as_strided(self: torch.Tensor, size: list[int], stride: list[int], storage_offset: int | None = None) -> torch.Tensor:
    """aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False


def _case(name, tag, base, dtype, size, stride, offset=None, slice_from=0):
    params = dict(
        base=base, dtype=dtype, size=size, stride=stride, offset=offset, slice_from=slice_from
    )
    return Case(name, tag, params)


CASES = [
    _case("smoke-windows", "smoke", [64], "float32", [15, 8], [4, 1]),
    _case("smoke-offset-f16", "smoke", [6, 10], "float16", [3, 4], [10, 2], offset=11),
    _case("smoke-sliced-self", "smoke", [50], "int64", [4, 3], [1, 4], slice_from=7),
    _case("scalar-view", "check", [10], "float32", [], [], offset=3),
    _case("empty-view", "check", [10], "float32", [0, 4], [4, 1]),
    _case("transpose-like", "check", [33, 65], "bfloat16", [65, 33], [1, 65]),
    _case("broadcast-zero-stride", "check", [129], "float32", [7, 129], [0, 1]),
    _case(
        "im2col-windows",
        "check",
        [2, 3, 16, 16],
        "float16",
        [2, 3, 14, 14, 3, 3],
        [768, 256, 16, 1, 16, 1],
    ),
    _case(
        "sliced-self-default-offset", "check", [1000], "float32", [10, 10], [10, 1], slice_from=123
    ),
    _case(
        "sliced-self-absolute-offset",
        "check",
        [1000],
        "int32",
        [10, 10],
        [20, 2],
        offset=5,
        slice_from=123,
    ),
    _case("audio-frames", "check", [16000], "float32", [97, 400], [160, 1]),
    _case("bool", "check", [40], "bool", [5, 5], [3, 1]),
    _case("bench-windows", "bench", [1 << 24], "float32", [65533, 1024], [256, 1]),
    _case("bench-transpose", "bench", [4096, 4096], "bfloat16", [4096, 4096], [1, 4096]),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = torch.randn(p["base"], generator=gen) * 10
    x = (x > 0) if dtype == torch.bool else x.to(dtype)
    x = x.to(device)
    if p["slice_from"]:
        x = x[p["slice_from"] :]
    return dict(self=x, size=list(p["size"]), stride=list(p["stride"]), storage_offset=p["offset"])


reference = torch.ops.aten.as_strided.default


compare = views.compare
