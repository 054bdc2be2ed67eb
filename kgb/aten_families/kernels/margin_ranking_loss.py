"""margin_ranking_loss of the loss family: its loss, then the family's launch."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.loss import _emit, _load, _loss, _tile
from kgb.aten_families.kernels.rounding import _r


@triton.jit
def _margin_kernel(a_ptr, b_ptr, t_ptr, y_ptr, R, C, num_cb, sar, sac, sbr, sbc, str_, stc, margin,
                   REDUCE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    DT: tl.constexpr = a_ptr.dtype.element_ty
    pid, rows, cols, mask = _tile(R, C, num_cb, BLOCK_R, BLOCK_C)
    a = _load(a_ptr, rows, cols, sar, sac, mask)
    b = _load(b_ptr, rows, cols, sbr, sbc, mask)
    t = _load(t_ptr, rows, cols, str_, stc, mask)
    # PyTorch's order of operations, each rounded to the input dtype
    loss = tl.maximum(_r(_r(-t * _r(a - b, DT), DT) + margin, DT), 0.0)
    _emit(y_ptr, loss, pid, rows, cols, C, mask, DT, REDUCE)


def margin_ranking_loss(input1: torch.Tensor, input2: torch.Tensor, target: torch.Tensor,
                        margin: float = 0.0, reduction: int = 1) -> torch.Tensor:
    return _loss(_margin_kernel, (input1, input2, target), (float(margin),), reduction)
