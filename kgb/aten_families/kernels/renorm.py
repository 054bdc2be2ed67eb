"""renorm of the rowwise family: one program per slice computes its norm, then writes the
slice scaled by its factor."""

import math

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.along import _along
from kgb.aten_families.kernels.pnorm import _pnorm, _pnorm_add
from kgb.aten_families.kernels.rounding import _round_to


@triton.jit
def _renorm_kernel(x_ptr, y_ptr, R, K, sxo, sxd, sxk, syo, syd, syk, p, maxnorm,
                   NORM: tl.constexpr, BLOCK: tl.constexpr):
    # x seen as (O, D, K): program d handles slice x[:, d, :], its R = O * K elements
    # walked in flat order r -> (r // K, r % K).
    OUT: tl.constexpr = y_ptr.dtype.element_ty
    d = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, R, BLOCK):
        r = start + tl.arange(0, BLOCK).to(tl.int64)
        ok = r < R
        x = tl.load(x_ptr + d * sxd + (r // K) * sxo + (r % K) * sxk, mask=ok, other=0.0)
        a = tl.abs(x.to(tl.float32))
        acc = _pnorm_add(acc, a, p, NORM)
    norm = _pnorm(acc, p, NORM, 0)
    factor = tl.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    factor = _round_to(factor, OUT).to(tl.float32)  # PyTorch keeps the factor in self's dtype
    for start in range(0, R, BLOCK):
        r = start + tl.arange(0, BLOCK).to(tl.int64)
        ok = r < R
        x = tl.load(x_ptr + d * sxd + (r // K) * sxo + (r % K) * sxk, mask=ok, other=0.0)
        y = _round_to(x.to(tl.float32) * factor, OUT)
        tl.store(y_ptr + d * syd + (r // K) * syo + (r % K) * syk, y, mask=ok)


def renorm(self: torch.Tensor, p: float, dim: int, maxnorm: float) -> torch.Tensor:
    if self.ndim < 2:
        raise RuntimeError("renorm: input needs at least 2 dimensions")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    dim = dim % self.ndim
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    if out.numel() == 0:
        return out
    x, (O, so), (D, sd), (K, sk) = _along(self, dim)
    kind = {1.0: 1, 2.0: 2, math.inf: 3}.get(float(p), 0)
    block = min(triton.next_power_of_2(O * K), 1024)
    _renorm_kernel[(D,)](x, out, O * K, K, so, sd, sk, D * K, K, 1,
                         float(p), float(maxnorm), NORM=kind, BLOCK=block)
    return out
