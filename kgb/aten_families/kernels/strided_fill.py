"""A Python scalar written into every element a strided tensor views, and no other byte of
its storage (fill_ and zero_ of the filling family)."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.scalar_fill import BLOCK, _scalar, _store_value
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets


@triton.jit
def _fill_strided(
    ptr, hi, lo, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, ACC: tl.constexpr, BLOCK: tl.constexpr
):
    # the value is hi + lo rebuilt in ACC (int64 for ints, float64 for floats)
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    _store_value(ptr, (tl.zeros([BLOCK], ACC) + hi) + lo, offs, idx < n)


def fill_strided(t: torch.Tensor, value) -> torch.Tensor:
    n = t.numel()
    if n:
        hi, lo, acc = _scalar(value)
        # the pointer is t's first element (data_ptr includes the storage offset)
        _fill_strided[(triton.cdiv(n, BLOCK),)](t, hi, lo, n, *_layout(t), ACC=acc, BLOCK=BLOCK)
    return t
