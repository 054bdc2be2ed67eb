import torch
import triton
import triton.language as tl

BLOCK = 1024
# integer views of the float dtypes, and their sign bit (as a signed value)
_BITS = {torch.float16: (torch.int16, -(2**15)), torch.bfloat16: (torch.int16, -(2**15)),
         torch.float32: (torch.int32, -(2**31))}


@triton.jit
def _neg_kernel(x_ptr, y_ptr, n, SIGN_BIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if SIGN_BIT != 0:
        y = x ^ SIGN_BIT  # a float seen as integer bits: flip the sign bit, exact for every value
    else:
        y = 0 - x  # an integer dtype: wraps around as two's complement
    tl.store(y_ptr + offs, y, mask=mask)


def neg(self: torch.Tensor) -> torch.Tensor:
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x, y, sign_bit = self.contiguous(), out, 0
    if self.dtype in _BITS:
        bits, sign_bit = _BITS[self.dtype]
        x, y = x.view(bits), out.view(bits)
    _neg_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, SIGN_BIT=sign_bit, BLOCK=BLOCK)
    return out
