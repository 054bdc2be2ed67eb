"""Split a tensor into equal chunks along a dimension, as views: `aten::unsafe_split.Tensor`.

Returns a list of views of `self` along `dim` (negative counts from the end): piece k
covers positions [k * split_size, min((k + 1) * split_size, size)) of that dimension, so
every piece has split_size there except possibly a shorter last one. The number of pieces
is ceil(size / split_size), at least 1: a dimension of size 0 gives one empty piece (also
when split_size is 0), and split_size >= size gives one piece, the whole tensor.

This is a view operation, like `split`: every piece shares self's storage (same strides,
storage offset of its first element), so writing into a piece writes into `self`. Nothing
is computed, so no Triton kernel needs to be launched (KERNEL_REQUIRED is off); a copy
instead of a view is wrong. "unsafe" only means autograd does not track the pieces as
views. `self` (>= 1 dimension, any dtype) may be non-contiguous; it must not be modified.

Required overload: `unsafe_split.Tensor`. Left out: `unsafe_split.Tensor_out`.
"""

import torch

from kgb.aten_families import split_views
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def unsafe_split_Tensor(self: torch.Tensor, split_size: int, dim: int = 0) -> list[torch.Tensor]:
    """aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]"""
'''

KERNEL_REQUIRED = False


def _case(name, tag, shape, split, dim, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, split=split, dim=dim, dtype=dtype, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-rows", "smoke", (7, 3), 3, 0),
    _case("smoke-last-f16", "smoke", (2, 10), 4, -1, "float16", seed=1),
    _case("qkv-bf16", "check", (4, 77, 3 * 768), 768, 2, "bfloat16"),
    _case("gates-f32", "check", (33, 4 * 100), 100, 1),
    _case("uneven", "check", (10, 5, 3), 4, 0),
    _case("one-piece", "check", (5, 3), 7, 0),
    _case("empty-dim", "check", (0, 3), 2, 0),
    _case("zero-split-empty", "check", (4, 0), 0, 1),
    _case("transposed", "check", (9, 12), 5, 1, transpose=True),
    _case("int64", "check", (6, 6), 1, 0, "int64"),
    _case("bench-qkv-f16", "bench", (8, 2048, 3 * 4096), 4096, -1, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    return dict(self=split_views.split_self(p, gen, device), split_size=p["split"], dim=p["dim"])


def reference(self, split_size, dim=0):
    return torch.ops.aten.unsafe_split.Tensor(self, split_size, dim)


compare = split_views.compare
