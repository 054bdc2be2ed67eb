"""floor of the unary family: floats rounded down, integers copied, in their own dtype."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _launch


@triton.jit
def _floor_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        # float16/bfloat16 values are exact in float32, and so is their floor
        x = tl.floor(x.to(tl.float32)).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs, x, mask=mask)  # integers are already whole: an exact copy


def floor(self: torch.Tensor) -> torch.Tensor:
    return _launch(_floor_kernel, self, self.dtype, IS_FLOAT=self.is_floating_point())
