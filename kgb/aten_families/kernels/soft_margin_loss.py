"""soft_margin_loss of the loss family: its loss, then the family's launch."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.loss import _emit, _load, _loss, _tile
from kgb.aten_families.kernels.rounding import _r


@triton.jit
def _soft_margin_kernel(x_ptr, t_ptr, y_ptr, R, C, num_cb, sxr, sxc, str_, stc,
                        REDUCE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    DT: tl.constexpr = x_ptr.dtype.element_ty
    pid, rows, cols, mask = _tile(R, C, num_cb, BLOCK_R, BLOCK_C)
    x = _load(x_ptr, rows, cols, sxr, sxc, mask)
    t = _load(t_ptr, rows, cols, str_, stc, mask)
    # log1p(exp(-x * t)), each step rounded to the input dtype as PyTorch does
    e = _r(tl.exp(_r(-x * t, DT)), DT)
    # log1p(e) = log(u) * e / (u - 1) with u = 1 + e keeps full accuracy for small e
    u = 1.0 + e
    log1p_e = tl.where(u == 1.0, e, tl.log(u) * (e / (u - 1.0)))
    loss = _r(tl.where(e == float("inf"), e, log1p_e), DT)
    _emit(y_ptr, loss, pid, rows, cols, C, mask, DT, REDUCE)


def soft_margin_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1) -> torch.Tensor:
    return _loss(_soft_margin_kernel, (self, target), (), reduction)
