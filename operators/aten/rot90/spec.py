"""Rotate by quarter turns in the plane of two dimensions: `aten::rot90`.

Rotates `self` by k * 90 degrees, from the direction of dims[0] towards dims[1]. For a
matrix with dims=[0, 1] and k=1 (counter-clockwise as printed): out[i][j] =
self[j][m - 1 - i] where m = self.size(1), and out has shape (self.size(1), self.size(0)).
In general, with d0, d1 = dims:
- k % 4 == 1: flip along d1, then swap d0 and d1;
- k % 4 == 2: flip along d0 and d1 (shape unchanged);
- k % 4 == 3: flip along d0, then swap d0 and d1;
- k % 4 == 0: an unchanged copy.
k may be any integer (negative turns the other way: k is taken modulo 4). dims are two
different dimensions (negative values count from the end); `self` has at least 2
dimensions, any dtype, and may be non-contiguous or empty. The result is always a new
tensor (never a view of `self`; its strides are free); `self` must not be modified.
This is pure data movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`) and
`flip` are not allowed; the data must be moved by Triton kernels.

Required overload: `rot90` (default). Left out: `rot90.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def rot90(self: torch.Tensor, k: int = 1, dims: list[int] = (0, 1)) -> torch.Tensor:
    """aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::flip", "aten::rot90")


def _case(name, tag, shape, k, dims, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, k=k, dims=dims, dtype=dtype, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-k1", "smoke", (5, 7), 1, [0, 1]),
    _case("smoke-k2-f16", "smoke", (2, 3, 4), 2, [1, 2], "float16", seed=1),
    _case("k3-f32", "check", (33, 65), 3, [0, 1]),
    _case("k0-copy", "check", (17, 9), 0, [0, 1]),
    _case("negative-k", "check", (6, 10, 12), -1, [1, 2]),
    _case("large-k", "check", (6, 10, 12), 7, [2, 0]),
    _case("images-bf16", "check", (4, 3, 32, 48), 1, [-2, -1], "bfloat16"),
    _case("batch-last", "check", (7, 8, 9, 3), 2, [0, 2]),
    _case("transposed", "check", (40, 30), 1, [0, 1], transpose=True),
    _case("int64", "check", (11, 13), 3, [1, 0], "int64"),
    _case("bool", "check", (11, 13), 1, [0, 1], "bool"),
    _case("empty", "check", (0, 5), 1, [0, 1]),
    _case("bench-images-f16", "bench", (64, 3, 512, 512), 1, [2, 3], "float16"),
    _case("bench-matrix-f32", "bench", (8192, 8192), 2, [0, 1]),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "int64":
        return torch.randint(-1000, 1000, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    if p["transpose"]:
        x = _tensor(shape[::-1], p["dtype"], gen).to(device).t()
    else:
        x = _tensor(shape, p["dtype"], gen).to(device)
    return dict(self=x, k=p["k"], dims=list(p["dims"]))


def reference(self, k=1, dims=(0, 1)):
    return torch.ops.aten.rot90(self, k, list(dims))
