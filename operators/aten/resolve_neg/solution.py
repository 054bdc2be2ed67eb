import torch
import triton
import triton.language as tl

BLOCK = 1024
# integer views of the float dtypes, and their sign bit (as a signed value)
_BITS = {torch.float16: (torch.int16, -(2**15)), torch.bfloat16: (torch.int16, -(2**15)),
         torch.float32: (torch.int32, -(2**31))}


@triton.jit
def _neg_copy_kernel(src_ptr, dst_ptr, n, s1, s2, s3, t0, t1, t2, t3,
                     SIGN_BIT: tl.constexpr, BLOCK: tl.constexpr):
    # src: the stored values at element strides t0..t3 (shape [*, s1, s2, s3]); dst:
    # contiguous. Writes the negated values.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    i3 = i % s3
    i2 = (i // s3) % s2
    i1 = (i // (s3 * s2)) % s1
    i0 = i // (s3 * s2 * s1)
    x = tl.load(src_ptr + i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3, mask=mask, other=0)
    if SIGN_BIT != 0:
        y = x ^ SIGN_BIT  # float bits seen as an integer: flip the sign, exact for every value
    else:
        y = 0 - x  # integers wrap around as two's complement
    tl.store(dst_ptr + i, y, mask=mask)


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
        raise NotImplementedError("resolve_neg: more than 4 non-mergeable dimensions")
    return [(1, 0)] * (4 - len(dims)) + dims


def resolve_neg(self: torch.Tensor) -> torch.Tensor:
    if not self.is_neg():
        return self  # nothing to resolve: self itself, as ATen does
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    (_, t0), (s1, t1), (s2, t2), (s3, t3) = _collapse(self.shape, self.stride())
    # a kernel reads the stored memory through the data pointer: the bit is not applied
    src, dst, sign_bit = self, out, 0
    if self.dtype in _BITS:
        bits, sign_bit = _BITS[self.dtype]
        src, dst = torch._neg_view(self).view(bits), out.view(bits)  # same memory, as integers
    _neg_copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, s1, s2, s3, t0, t1, t2, t3,
                                               SIGN_BIT=sign_bit, BLOCK=BLOCK)
    return out
