"""huber_loss of the loss family: its loss, then the family's launch."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.loss import _emit, _load, _loss, _tile
from kgb.aten_families.kernels.rounding import _r


@triton.jit
def _huber_kernel(a_ptr, b_ptr, y_ptr, R, C, num_cb, sar, sac, sbr, sbc, delta,
                  REDUCE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    DT: tl.constexpr = a_ptr.dtype.element_ty
    pid, rows, cols, mask = _tile(R, C, num_cb, BLOCK_R, BLOCK_C)
    a = _load(a_ptr, rows, cols, sar, sac, mask)
    b = _load(b_ptr, rows, cols, sbr, sbc, mask)
    # PyTorch's order of operations, each rounded to the input dtype
    z = tl.abs(_r(a - b, DT))
    d = _r(tl.zeros([BLOCK_R, BLOCK_C], tl.float32) + delta, DT)
    quad = _r(_r(0.5 * z, DT) * z, DT)
    lin = _r(d * _r(z - _r(0.5 * d, DT), DT), DT)
    _emit(y_ptr, tl.where(z < d, quad, lin), pid, rows, cols, C, mask, DT, REDUCE)


def huber_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1, delta: float = 1.0) -> torch.Tensor:
    return _loss(_huber_kernel, (self, target), (float(delta),), reduction)
