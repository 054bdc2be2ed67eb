"""Split a tensor into pieces of given sizes along a dimension, as views:
`aten::unsafe_split_with_sizes`.

Returns one view of `self` per entry of `split_sizes`, in order, along `dim` (negative
counts from the end): piece k covers positions [sum(split_sizes[:k]), sum(split_sizes[:k+1]))
of that dimension. The sizes are non-negative and sum to self.size(dim); a size of 0
gives an empty piece.

This is a view operation, like `split_with_sizes`: every piece shares self's storage (same strides,
storage offset of its first element), so writing into a piece writes into `self`. Nothing
is computed, so no Triton kernel needs to be launched (KERNEL_REQUIRED is off); a copy
instead of a view is wrong. "unsafe" only means autograd does not track the pieces as
views. `self` (>= 1 dimension, any dtype) may be non-contiguous; it must not be modified.

Required overload: `unsafe_split_with_sizes` (default). Left out: `unsafe_split_with_sizes.out`.
"""

import torch

from kgb.aten_families import split_views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def unsafe_split_with_sizes(self: torch.Tensor, split_sizes: list[int], dim: int = 0) -> list[torch.Tensor]:
    """aten::unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"""
'''

KERNEL_REQUIRED = False


def _case(name, tag, shape, split, dim, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, split=split, dim=dim, dtype=dtype, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-rows", "smoke", (7, 3), [2, 5], 0),
    _case("smoke-last-f16", "smoke", (2, 10), [3, 0, 7], -1, "float16", seed=1),
    _case("qkv-gqa-bf16", "check", (4, 77, 1024 + 2 * 256), [1024, 256, 256], 2, "bfloat16"),
    _case("gates-f32", "check", (33, 400), [100, 100, 100, 100], 1),
    _case("uneven", "check", (10, 5, 3), [1, 4], 1),
    _case("one-piece", "check", (5, 3), [5], 0),
    _case("empty-dim", "check", (0, 3), [0, 0], 0),
    _case("transposed", "check", (9, 12), [5, 6, 1], 1, transpose=True),
    _case("int64", "check", (6, 6), [1, 1, 1, 1, 1, 1], 0, "int64"),
    _case("bench-qkv-f16", "bench", (8, 2048, 4096 + 2 * 1024), [4096, 1024, 1024], -1, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    return dict(self=split_views.split_self(p, gen, device), split_sizes=list(p["split"]), dim=p["dim"])


def reference(self, split_sizes, dim=0):
    return torch.ops.aten.unsafe_split_with_sizes(self, split_sizes, dim)


compare = split_views.compare
