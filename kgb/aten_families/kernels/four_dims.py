"""The strided read of the lazy_bits family's kernels (resolve_conj, resolve_neg): a
tensor's dims merged into at most four, and each element's offset under their strides.
Every solution of the family carries this text (a candidate cannot import it)."""

import triton

BLOCK = 1024


def _collapse(shape, stride):
    """Up to 4 (size, stride) dims describing the same elements in the same order."""
    dims = []
    for size, st in zip(shape, stride, strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == st * size:  # the previous dim steps over this one exactly
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    if len(dims) > 4:
        raise NotImplementedError("more than 4 non-mergeable dimensions")
    return [(1, 0)] * (4 - len(dims)) + dims


@triton.jit
def _offset4(i, s1, s2, s3, t0, t1, t2, t3):
    # row-major index i over [*, s1, s2, s3] -> element offset under strides t0..t3
    i3 = i % s3
    i2 = (i // s3) % s2
    i1 = (i // (s3 * s2)) % s1
    i0 = i // (s3 * s2 * s1)
    return i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3
