import math

import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_DIMS = 6


@triton.jit
def _gather_copy(
    src_ptr, dst_ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr
):
    # dst is contiguous; element idx of dst is element idx of src in row-major order
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
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
    src = i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5
    tl.store(dst_ptr + idx, tl.load(src_ptr + src, mask=mask), mask=mask)


def _infer(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("reshape: only one dimension can be inferred")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"reshape: shape {shape} is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if math.prod(shape) != numel:
        raise RuntimeError(f"reshape: shape {shape} is invalid for input of size {numel}")
    return shape


def _view_strides(old_shape, old_stride, new_shape):
    """Strides that express new_shape over the old layout, or None when none exist.

    Walks the old dims from the right in "chunks" of dims whose strides chain (each
    dim's stride = next stride * next size); a view exists iff the new dims can be
    grouped, from the right, into runs whose element counts match those chunks."""
    if not old_shape:
        return [1] * len(new_shape)
    numel = math.prod(old_shape)
    if numel == 0:
        if list(old_shape) == list(new_shape):
            return list(old_stride)
        strides, acc = [0] * len(new_shape), 1
        for d in reversed(range(len(new_shape))):
            strides[d] = acc
            acc *= max(new_shape[d], 1)
        return strides
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = old_stride[-1]  # stride of the innermost dim of the current chunk
    chunk_numel = view_numel = 1
    for d in reversed(range(len(old_shape))):
        chunk_numel *= old_shape[d]
        chunk_ends = d == 0 or (old_shape[d - 1] != 1 and old_stride[d - 1] != chunk_numel * base)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
            new_stride[view_d] = view_numel * base
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            base, chunk_numel, view_numel = old_stride[d - 1], 1, 1
    return new_stride if view_d == -1 else None


def _layout(t: torch.Tensor):
    """t's sizes and strides with size-1 dims dropped and chaining dims merged (row-major
    order is unchanged), padded in front to MAX_DIMS."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"reshape copies support up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[1] for d in dims]


def reshape(self, shape):
    shape = _infer(shape, self.numel())
    strides = _view_strides(list(self.shape), list(self.stride()), shape)
    if strides is not None:
        return self.as_strided(shape, strides, self.storage_offset())
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _gather_copy[(triton.cdiv(n, BLOCK),)](self, out, n, *_layout(self), BLOCK=BLOCK)
    return out
