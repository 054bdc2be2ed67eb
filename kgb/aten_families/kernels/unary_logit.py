"""logit of the unary family: log(z / (1 - z)), z clamped to [eps, 1 - eps] when eps is
given."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _float_result, _launch


@triton.jit
def _logit_kernel(x_ptr, y_ptr, n, lo, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=0.5).to(tl.float32)
    if CLAMP:
        hi = 1.0 - lo
        # lo first, then hi (matters when eps > 1/2); NaN fails both tests and stays NaN
        x = tl.where(x < lo, lo, tl.where(x > hi, hi, x))
    y = tl.log(x / (1.0 - x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def logit(self: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    clamp = eps is not None and eps >= 0  # a negative eps means no clamping, as in PyTorch
    lo = float(eps) if clamp else 0.0
    return _launch(_logit_kernel, self, _float_result(self), lo, CLAMP=clamp)
