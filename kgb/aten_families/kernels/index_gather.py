"""index's gather: every element of the result reads `self` at its index position's
base offset plus its offset along the dimensions that are not indexed."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.indexing import _nd_offsets


@triton.jit
def _gather_kernel(src, out, base, n, rn, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                   T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # out[i] = src[base[i // rn] + src_off(i)]: the index positions are the outer rn-blocks.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    b = tl.load(base + i // rn, mask=m, other=0)
    v = tl.load(src + b + so, mask=m)
    tl.store(out + do, v, mask=m)

