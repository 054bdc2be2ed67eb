"""Minimum over dimensions: `aten::amin`.

`amin(self, dim=[], keepdim=False)` returns the smallest element over the dimensions listed
in `dim` (negative values count from the end; no dimension repeats). An empty `dim` means
every dimension. With `keepdim` the reduced dimensions stay with size 1, otherwise they are
removed. A 0-d `self` accepts `dim` [], [0] or [-1] and gives a 0-d result.

- The result has the dtype of `self`: float16, bfloat16, float32, integer types or bool
  (for bool, the minimum is a logical AND). Values are returned exactly, no arithmetic.
- NaN propagates: if any element of a reduced group is NaN, that output is NaN.
- `self` may have any strides (transposed or sliced views).
- Every reduced dimension must be non-empty (PyTorch raises otherwise); a kept dimension
  of size zero gives an empty result.
- Unlike `aten::min.dim`, no indices are returned.
- The result is a new tensor; `self` must not be modified.
- Required: the default overload. Left out: `amin.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def amin(self: torch.Tensor, dim: list[int] = (), keepdim: bool = False) -> torch.Tensor:
    """aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
'''


def _case(name, tag, shape, dtype, dim=(), keepdim=False, transpose=False, nans=0.0, seed=0):
    params = dict(shape=shape, dtype=dtype, dim=list(dim), keepdim=keepdim, transpose=transpose, nans=nans)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-rows-f32", "smoke", (7, 33), "float32", dim=[-1]),
    _case("smoke-dim-f16-nan", "smoke", (5, 9, 6), "float16", dim=[1], nans=0.03, seed=1),
    _case("smoke-dims-int32", "smoke", (4, 5, 6), "int32", dim=[0, 2], keepdim=True, seed=2),
    _case("all-f32", "check", (1000, 999), "float32"),
    _case("all-bf16", "check", (3, 5000), "bfloat16"),
    _case("rows-f16", "check", (1823, 781), "float16", dim=[1]),
    _case("rows-nan", "check", (64, 4099), "float32", dim=[1], keepdim=True, nans=1e-4),
    _case("cols-f32", "check", (2000, 300), "float32", dim=[0]),
    _case("cols-nan-bf16", "check", (300, 200), "bfloat16", dim=[0], nans=0.002),
    _case("middle-f32", "check", (8, 129, 33), "float32", dim=[-2]),
    _case("spatial-f32", "check", (4, 16, 14, 14), "float32", dim=[2, 3], keepdim=True),
    _case("outer-inner", "check", (6, 7, 8, 9), "float32", dim=[0, 3]),
    _case("transposed", "check", (257, 300), "float32", dim=[1], transpose=True),
    _case("int64-rows", "check", (50, 600), "int64", dim=[1]),
    _case("int8-all", "check", (77, 33), "int8"),
    _case("uint8-cols", "check", (300, 50), "uint8", dim=[0]),
    _case("bool-rows", "check", (100, 7), "bool", dim=[1]),
    _case("scalar", "check", (), "float32"),
    _case("scalar-dim", "check", (), "float32", dim=[0], keepdim=True),
    _case("empty-kept", "check", (0, 7), "float32", dim=[1]),
    _case("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
    _case("bench-rows-bf16", "bench", (8192, 8192), "bfloat16", dim=[-1]),
    _case("bench-cols-f16", "bench", (8192, 8192), "float16", dim=[0]),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) < 0.9
    elif dtype.is_floating_point:
        x = torch.randn(shape, generator=gen) * 3
        if p["nans"]:
            x[torch.rand(shape, generator=gen) < p["nans"]] = float("nan")
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2**40)), min(info.max, 2**40), shape, generator=gen)
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    return dict(self=x, dim=p["dim"], keepdim=p["keepdim"])


def reference(self, dim=(), keepdim=False):
    return torch.ops.aten.amin.default(self, dim, keepdim)
