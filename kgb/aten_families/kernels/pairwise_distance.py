"""pairwise_distance of the rowwise family: the p-norm of each row of the broadcast
difference, BLOCK_R rows per program."""

import math

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.broadcast import _broadcast
from kgb.aten_families.kernels.pnorm import _pnorm, _pnorm_add
from kgb.aten_families.kernels.rounding import _round_to


@triton.jit
def _pdist_kernel(a_ptr, b_ptr, y_ptr, R, D, sar, sad, sbr, sbd, p, eps,
                  NORM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # y[r] = || a[r, :] - b[r, :] + eps ||_p for BLOCK_R rows per program.
    # NORM: 1, 2, 3 (inf), 4 (p = 0, a count) or 0 (general p).
    IN: tl.constexpr = a_ptr.dtype.element_ty
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    r_ok = rows < R
    acc = tl.zeros([BLOCK_R, BLOCK_D], tl.float32)
    for start in range(0, D, BLOCK_D):
        ds = start + tl.arange(0, BLOCK_D).to(tl.int64)
        mask = r_ok[:, None] & (ds < D)[None, :]
        a = tl.load(a_ptr + rows[:, None] * sar + ds[None, :] * sad, mask=mask, other=0.0)
        b = tl.load(b_ptr + rows[:, None] * sbr + ds[None, :] * sbd, mask=mask, other=0.0)
        # the difference and the eps shift are each rounded to the input dtype
        d = _round_to(a.to(tl.float32) - b.to(tl.float32), IN).to(tl.float32)
        d = _round_to(d + eps, IN).to(tl.float32)
        v = tl.where(mask, tl.abs(d), 0.0)
        acc = _pnorm_add(acc, v, p, NORM)
    norm = _pnorm(acc, p, NORM, 1)
    tl.store(y_ptr + rows, _round_to(norm, y_ptr.dtype.element_ty), mask=r_ok)


def pairwise_distance(x1: torch.Tensor, x2: torch.Tensor, p: float = 2.0, eps: float = 1e-06,
                      keepdim: bool = False) -> torch.Tensor:
    shape, ((a, sar, sad), (b, sbr, sbd)) = _broadcast(x1, x2)
    out_shape = shape[:-1] + [1] if keepdim else shape[:-1]
    if max(x1.ndim, x2.ndim) == 0:
        out_shape = []
    out = torch.empty(out_shape, dtype=x1.dtype, device=x1.device)
    R, D = math.prod(shape[:-1]), shape[-1]
    if R == 0:
        return out
    kind = {1.0: 1, 2.0: 2, math.inf: 3, 0.0: 4}.get(float(p), 0)
    block_d = min(triton.next_power_of_2(max(D, 1)), 1024)
    block_r = max(1, min(triton.next_power_of_2(R), 2048 // block_d))
    _pdist_kernel[(triton.cdiv(R, block_r),)](a, b, out, R, D, sar, sad, sbr, sbd, float(p), float(eps),
                                              NORM=kind, BLOCK_R=block_r, BLOCK_D=block_d)
    return out
