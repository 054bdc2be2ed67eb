"""square of the unary family: floats in float32, integers wrapping in their own dtype,
bool to int64."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _launch


@triton.jit
def _square_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        x = x.to(tl.float32)  # half precision: one rounding, at the store
    else:
        x = x.to(y_ptr.dtype.element_ty)  # integers multiply (and wrap) in the result dtype
    y = x * x
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def square(self: torch.Tensor) -> torch.Tensor:
    # bool squares to int64 (PyTorch promotes pow(bool, 2) to the default integer dtype)
    out_dtype = torch.int64 if self.dtype == torch.bool else self.dtype
    return _launch(_square_kernel, self, out_dtype, IS_FLOAT=self.is_floating_point())
