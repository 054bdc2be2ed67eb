"""binary_cross_entropy_with_logits of the loss family: its loss, then the family's launch."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.loss import _emit, _load, _loss, _tile
from kgb.aten_families.kernels.rounding import _r


@triton.jit
def _bce_kernel(x_ptr, t_ptr, w_ptr, pw_ptr, y_ptr, R, C, num_cb, sxr, sxc, str_, stc, swr, swc,
                spr, spc, HAS_W: tl.constexpr, HAS_PW: tl.constexpr, REDUCE: tl.constexpr,
                BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    DT: tl.constexpr = x_ptr.dtype.element_ty
    pid, rows, cols, mask = _tile(R, C, num_cb, BLOCK_R, BLOCK_C)
    x = _load(x_ptr, rows, cols, sxr, sxc, mask)
    t = _load(t_ptr, rows, cols, str_, stc, mask)
    # log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)); log1p(e) = log(u) * e / (u - 1) with
    # u = 1 + e keeps full accuracy for small e
    e = tl.exp(-tl.abs(x))
    u = 1.0 + e
    log1p_e = tl.where(u == 1.0, e, tl.log(u) * (e / (u - 1.0)))
    ls = _r(tl.minimum(x, 0.0) - log1p_e, DT)
    # PyTorch's order of operations, each rounded to the input dtype
    if HAS_PW:
        pw = _load(pw_ptr, rows, cols, spr, spc, mask)
        ls = _r(ls * _r(_r(_r(pw - 1.0, DT) * t, DT) + 1.0, DT), DT)
    loss = _r(_r(_r(1.0 - t, DT) * x, DT) - ls, DT)
    if HAS_W:
        loss = _r(loss * _load(w_ptr, rows, cols, swr, swc, mask), DT)
    _emit(y_ptr, loss, pid, rows, cols, C, mask, DT, REDUCE)


def binary_cross_entropy_with_logits(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                                     pos_weight: torch.Tensor | None = None, reduction: int = 1) -> torch.Tensor:
    # absent weights are replaced by self; HAS_W / HAS_PW keep the kernel from reading them
    inputs = (self, target, self if weight is None else weight, self if pos_weight is None else pos_weight)
    return _loss(_bce_kernel, inputs, (), reduction, HAS_W=weight is not None, HAS_PW=pos_weight is not None)
