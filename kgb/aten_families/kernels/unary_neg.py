"""neg of the unary family: floats by their sign bit, integers wrapping, in their own
dtype."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _launch

# integer views of the float dtypes, and their sign bit (as a signed value)
_BITS = {torch.float16: (torch.int16, -(2**15)), torch.bfloat16: (torch.int16, -(2**15)),
         torch.float32: (torch.int32, -(2**31))}


@triton.jit
def _neg_kernel(x_ptr, y_ptr, n, SIGN_BIT: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if SIGN_BIT != 0:
        y = x ^ SIGN_BIT  # a float seen as integer bits: flip the sign bit, exact for every value
    else:
        y = 0 - x  # an integer dtype: wraps around as two's complement
    tl.store(y_ptr + offs, y, mask=mask)


def neg(self: torch.Tensor) -> torch.Tensor:
    bits, sign_bit = _BITS.get(self.dtype, (None, 0))
    return _launch(_neg_kernel, self, self.dtype, view=bits, SIGN_BIT=sign_bit)
