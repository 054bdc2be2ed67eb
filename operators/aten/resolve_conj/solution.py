import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _conj_copy_kernel(src_ptr, dst_ptr, n, s1, s2, s3, t0, t1, t2, t3, BLOCK: tl.constexpr):
    # src: complex values as float32 (re, im) pairs at element strides t0..t3 (in floats,
    # shape [*, s1, s2, s3]); dst: contiguous pairs. Writes (re, -im).
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    i3 = i % s3
    i2 = (i // s3) % s2
    i1 = (i // (s3 * s2)) % s1
    i0 = i // (s3 * s2 * s1)
    src = i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3
    re = tl.load(src_ptr + src, mask=mask, other=0)
    im = tl.load(src_ptr + src + 1, mask=mask, other=0)
    tl.store(dst_ptr + 2 * i, re, mask=mask)
    tl.store(dst_ptr + 2 * i + 1, -im, mask=mask)


def _collapse(shape, stride):
    """Up to 4 (size, stride) dims describing the same elements in the same order."""
    dims = []
    for size, st in zip(shape, stride):
        if size == 1:
            continue
        if dims and dims[-1][1] == st * size:  # the previous dim steps over this one exactly
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    if len(dims) > 4:
        raise NotImplementedError("resolve_conj: more than 4 non-mergeable dimensions")
    return [(1, 0)] * (4 - len(dims)) + dims


def resolve_conj(self: torch.Tensor) -> torch.Tensor:
    if not self.is_conj():
        return self  # nothing to resolve: self itself, as ATen does
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    # the stored memory as float pairs: conj() clears the bit on a view, view_as_real splits
    raw = torch.view_as_real(self.conj())
    (_, t0), (s1, t1), (s2, t2), (s3, t3) = _collapse(raw.shape[:-1], raw.stride()[:-1])
    dst = torch.view_as_real(out)
    _conj_copy_kernel[(triton.cdiv(n, BLOCK),)](raw, dst, n, s1, s2, s3, t0, t1, t2, t3, BLOCK=BLOCK)
    return out
