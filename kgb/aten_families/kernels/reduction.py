"""The strided reduction kernel of the reduction family (mean, sum): x seen as (O, N, K)
after merging dimensions, summed over N, optionally divided, with long reductions split
over several programs and their partial sums reduced again."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.onk import _as_onk, _onk_block, _plan
from kgb.aten_families.kernels.tl_types import _TL


@triton.jit
def _reduce_kernel(x_ptr, y_ptr, N, K, num_kb, chunk, sxo, sxn, sxk, y_split_stride, divisor,
                   CAST: tl.constexpr, ACC: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # x seen as (O, N, K); y[split, o, k] = sum over this split's n-range of x[o, n, k].
    # Each value is converted to CAST first (dtype= semantics), then accumulated in ACC.
    offs, out, k_ok, n_lo, n_hi = _onk_block(N, K, num_kb, chunk, sxo, sxk, y_split_stride, BLOCK_K)
    base = x_ptr + offs
    acc = tl.zeros([BLOCK_N, BLOCK_K], ACC)
    for start in range(n_lo, n_hi, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < n_hi)[:, None] & k_ok[None, :]
        x = tl.load(base[None, :] + ns[:, None] * sxn, mask=mask, other=0)
        acc += x.to(CAST).to(ACC)
    total = tl.sum(acc, 0)
    if ACC.is_floating():
        total = total / divisor
    tl.store(y_ptr + out, total.to(y_ptr.dtype.element_ty), mask=k_ok)


def _reduce(x, dims, out, divisor, cast=None):
    """out (contiguous, numel O*K) = sum over dims of x, divided by divisor if floating.
    Elements are converted to `cast` (default: out's dtype) before they are added."""
    x, [(O, so), (N, sn), (K, sk)] = _as_onk(x, dims)
    if out.numel() == 0:
        return
    O, K, so, sk, block_n, block_k, num_kb, splits, chunk = _plan(O, N, K, so, sk, 256, 4096)
    programs = O * num_kb
    acc = tl.float64 if out.dtype == torch.float64 else (tl.float32 if out.dtype.is_floating_point else tl.int64)
    kw = dict(CAST=_TL[cast or out.dtype], BLOCK_N=block_n, BLOCK_K=block_k)
    if splits == 1:
        _reduce_kernel[(programs, 1)](x, out, N, K, num_kb, chunk, so, sn, sk, 0, float(divisor), ACC=acc, **kw)
        return
    part_dtype = {tl.float64: torch.float64, tl.float32: torch.float32, tl.int64: torch.int64}[acc]
    part = torch.empty((splits, O * K), dtype=part_dtype, device=x.device)
    _reduce_kernel[(programs, splits)](x, part, N, K, num_kb, chunk, so, sn, sk, O * K, 1.0,
                                       ACC=acc, **kw)
    # second pass: part viewed as (1, splits, O*K), reduced over splits
    _reduce(part, [0], out, divisor, cast=part_dtype)
