"""sgn of the unary family: the sign of reals, z / |z| of complex64, in their own dtype."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _launch


@triton.jit
def _sign_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        x = x.to(tl.float32)
    # (0 < x) - (x < 0): NaN compares false both ways and gives 0, as in PyTorch
    y = (x > 0).to(tl.int32) - (x < 0).to(tl.int32)
    if IS_FLOAT:
        y = y.to(tl.float32)  # int -> bfloat16 through float32 (the CPU interpreter miscasts it directly)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _complex_sgn_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # x_ptr, y_ptr: complex64 data seen as interleaved float32 (re, im) pairs
    offs, mask = _block(n, BLOCK)
    re = tl.load(x_ptr + 2 * offs, mask=mask, other=0)
    im = tl.load(x_ptr + 2 * offs + 1, mask=mask, other=0)
    # scale by the larger component so that |z| neither overflows nor underflows
    m = tl.maximum(tl.abs(re), tl.abs(im))
    zero = m == 0
    m = tl.where(zero, 1.0, m)
    re = re / m
    im = im / m
    h = tl.sqrt_rn(re * re + im * im)
    tl.store(y_ptr + 2 * offs, tl.where(zero, 0.0, re / h), mask=mask)
    tl.store(y_ptr + 2 * offs + 1, tl.where(zero, 0.0, im / h), mask=mask)


def sgn(self: torch.Tensor) -> torch.Tensor:
    if self.dtype == torch.complex64:
        # Triton has no complex dtype: view the storage as float32 pairs
        return _launch(_complex_sgn_kernel, self, self.dtype, view=torch.float32)
    return _launch(_sign_kernel, self, self.dtype, IS_FLOAT=self.is_floating_point())
