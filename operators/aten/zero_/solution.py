import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_DIMS = 6


@triton.jit
def _zero_strided(ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    # element offset of logical (row-major) index idx, up to 6 dims
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
    offs = i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5
    tl.store(ptr + offs, tl.zeros([BLOCK], ptr.dtype.element_ty), mask=idx < n)


def _layout(t: torch.Tensor):
    """Sizes and strides of t with size-1 dims dropped and mergeable dims merged, padded
    in front to MAX_DIMS (size 1, stride 0)."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"zero_ supports up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[1] for d in dims]


def zero_(self):
    n = self.numel()
    if n:
        # the pointer is self's first element (data_ptr includes the storage offset)
        _zero_strided[(triton.cdiv(n, BLOCK),)](self, n, *_layout(self), BLOCK=BLOCK)
    return self
