"""bitwise_not of the unary family: integers and bool, in their own dtype."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _launch


@triton.jit
def _bitwise_not_kernel(x_ptr, y_ptr, n, IS_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_BOOL:
        y = x ^ 1  # bool bytes are 0 or 1: flip only the lowest bit
    else:
        y = ~x
    tl.store(y_ptr + offs, y, mask=mask)


def bitwise_not(self: torch.Tensor) -> torch.Tensor:
    return _launch(_bitwise_not_kernel, self, self.dtype, IS_BOOL=self.dtype == torch.bool)
