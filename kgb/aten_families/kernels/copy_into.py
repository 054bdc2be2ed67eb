"""`dst[...] = src[...]` with src broadcast to dst's shape and its values converted to
dst's dtype as ATen converts them: the copy under clone, contiguous, copy_, _to_copy, to,
cat, stack and scatter. Pasted after nd_walk.py."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.nd_walk import BLOCK, _collapse, _nd_offsets


@triton.jit
def _copy_kernel(src, dst, n, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                 T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # dst[walk] = src[walk] converted to dst's dtype; S/T are the two tensors' strides.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    v = tl.load(src + so, mask=m)
    if dst.dtype.element_ty == tl.float16 or dst.dtype.element_ty == tl.bfloat16:
        v = v.to(tl.float32)  # ATen rounds integers (and doubles) to half through float32
    tl.store(dst + do, v.to(dst.dtype.element_ty), mask=m)


def _copy_into(dst, src):
    """dst[...] = src[...] (src broadcast to dst's shape), converting the dtype."""
    n = dst.numel()
    if n:
        src = src.expand(dst.shape)
        # walk the elements in dst's memory order, so that writes (and reads of a
        # same-layout src, e.g. a transposed clone) are coalesced
        order = sorted(range(dst.ndim), key=lambda k: -dst.stride(k))
        ndim, d, (s, t) = _collapse([dst.shape[k] for k in order], [src.stride(k) for k in order],
                                    [dst.stride(k) for k in order])
        _copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK)
    return dst
