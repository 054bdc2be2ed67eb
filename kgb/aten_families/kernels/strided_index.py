"""Strided addressing for the fill and sampling families: the host folds a tensor's dims
(size-1 dims dropped, dims whose strides chain merged, padded in front to six), and the
kernel turns a row-major element index into the element's offset through those sizes and
strides. Several tensors of one shape fold together, merging dims only where all chain."""

import torch
import triton

MAX_DIMS = 6


def _layout(*tensors: torch.Tensor):
    """The folded sizes s1..s5 (s0 is implied by the element count), then each tensor's
    strides t0..t5."""
    dims = []
    for size, *strides in zip(tensors[0].shape, *(t.stride() for t in tensors), strict=True):
        if size == 1:
            continue
        if dims and all(last == size * s for last, s in zip(dims[-1][1:], strides, strict=True)):
            dims[-1] = (dims[-1][0] * size, *strides)
        else:
            dims.append((size, *strides))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"up to {MAX_DIMS} non-mergeable dims are supported")
    dims = [(1,) + (0,) * len(tensors)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[k] for k in range(1, len(tensors) + 1) for d in dims]


@triton.jit
def _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5):
    # element offset of logical (row-major) index idx in a tensor of up to 6 dims
    i5 = idx % s5
    r = idx // s5
    i4 = r % s4
    r = r // s4
    i3 = r % s3
    r = r // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    return i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5
