"""The N-d walk the kernels of the copies and indexing families share: a flat index into
up to six merged dims, turned into element offsets under two stride sets, and the
host-side merge of a tensor's dims into as few as the strides allow. Every solution of
those families carries this text (a candidate cannot import it)."""

import triton
import triton.language as tl

MAXD = 6  # dims a kernel walks after merging; more is refused
BLOCK = 1024


@triton.jit
def _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr):
    # Row-major flat index -> element offsets under two stride sets. Dims are left-aligned
    # (dim 0 outermost, dim NDIM-1 innermost); the outermost coordinate is what remains.
    r = i
    a = i * 0
    b = i * 0
    if NDIM > 5:
        c = r % D5
        r = r // D5
        a += c * S5
        b += c * T5
    if NDIM > 4:
        c = r % D4
        r = r // D4
        a += c * S4
        b += c * T4
    if NDIM > 3:
        c = r % D3
        r = r // D3
        a += c * S3
        b += c * T3
    if NDIM > 2:
        c = r % D2
        r = r // D2
        a += c * S2
        b += c * T2
    if NDIM > 1:
        c = r % D1
        r = r // D1
        a += c * S1
        b += c * T1
    return a + r * S0, b + r * T0


def _collapse(shape, *strides):
    """Drop size-1 dims and merge neighbours contiguous in every stride list (same walk order)."""
    dims = []
    for k, size in enumerate(shape):
        if size == 1:
            continue
        st = [s[k] for s in strides]
        if dims and all(po == si * size for po, si in zip(dims[-1][1], st, strict=True)):
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    if not dims:
        dims = [(1, [0] * len(strides))]
    if len(dims) > MAXD:
        raise NotImplementedError(f"more than {MAXD} non-mergeable dimensions")
    sizes = [d[0] for d in dims] + [1] * (MAXD - len(dims))
    lists = [[d[1][j] for d in dims] + [0] * (MAXD - len(dims)) for j in range(len(strides))]
    return len(dims), sizes, lists
