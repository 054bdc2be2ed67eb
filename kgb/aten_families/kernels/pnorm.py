"""Accumulating a p-norm in float32, for pairwise_distance and renorm. NORM: 1, 2, 3 (inf),
4 (p = 0: a count of non-zeros) or 0 (any other p > 0)."""

import triton
import triton.language as tl


@triton.jit
def _pnorm_add(acc, v, p, NORM: tl.constexpr):
    # acc with the magnitudes v (0 where masked) added in
    if NORM == 1:
        acc += v
    elif NORM == 2:
        acc += v * v
    elif NORM == 3:
        acc = tl.maximum(acc, v)
    elif NORM == 4:
        acc += (v != 0).to(tl.float32)
    else:
        acc += tl.where(v > 0, tl.exp2(p * tl.log2(v)), 0.0)
    return acc


@triton.jit
def _pnorm(acc, p, NORM: tl.constexpr, AXIS: tl.constexpr):
    # the norm of what acc accumulated, reduced along AXIS
    if NORM == 3:
        norm = tl.max(acc, AXIS)
    else:
        norm = tl.sum(acc, AXIS)
        if NORM == 2:
            norm = tl.sqrt(norm)
        elif NORM == 0:
            norm = tl.where(norm > 0, tl.exp2(tl.log2(norm) / p), 0.0)
    return norm
