"""argmax of the extremum family: the first index of the largest value over N of x seen
as (O, N, K), NaN counting as largest, long reductions split and their partial results
reduced again."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.onk import _as_onk, _onk_block, _plan

_NO_INDEX = tl.constexpr(2**62)  # sentinel: this lane has seen no element yet


@triton.jit
def _argmax_kernel(x_ptr, i_ptr, yv_ptr, yi_ptr, N, K, num_kb, chunk, sxo, sxn, sxk, y_split_stride,
                   CT: tl.constexpr, LOW: tl.constexpr, FROM_PARTS: tl.constexpr, WRITE_VALUES: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # x seen as (O, N, K); for each (o, k): the largest value over this split's n-range and
    # its index (n itself, or read from i_ptr when reducing partial results). NaN beats
    # every number; ties keep the smaller index. Values are compared in CT.
    base, out, k_ok, n_lo, n_hi = _onk_block(N, K, num_kb, chunk, sxo, sxk, y_split_stride, BLOCK_K)
    # per-lane running best; each lane sees its indices in increasing order
    bval = tl.full([BLOCK_N, BLOCK_K], LOW, CT)
    bidx = tl.full([BLOCK_N, BLOCK_K], _NO_INDEX, tl.int64)
    bnan = tl.zeros([BLOCK_N, BLOCK_K], tl.int1)
    for start in range(n_lo, n_hi, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < n_hi)[:, None] & k_ok[None, :]
        offs = base[None, :] + ns[:, None] * sxn
        x = tl.load(x_ptr + offs, mask=mask, other=0).to(CT)
        if FROM_PARTS:
            idx = tl.load(i_ptr + offs, mask=mask, other=_NO_INDEX)
        else:
            idx = tl.broadcast_to(ns[:, None], [BLOCK_N, BLOCK_K])
        xn = x != x
        take = mask & ((bidx == _NO_INDEX) | (xn & ~bnan) | (~bnan & ~xn & (x > bval)))
        bval = tl.where(take, x, bval)
        bidx = tl.where(take, idx, bidx)
        bnan = bnan | (take & xn)
    # combine the lanes of each column
    valid = bidx != _NO_INDEX
    col_nan = tl.max(bnan.to(tl.int32), 0) > 0
    vmax = tl.max(tl.where(valid & ~bnan, bval, LOW), 0)
    cand = valid & tl.where(col_nan[None, :], bnan, bval == vmax[None, :])
    col_idx = tl.min(tl.where(cand, bidx, _NO_INDEX), 0)
    tl.store(yi_ptr + out, col_idx, mask=k_ok)
    if WRITE_VALUES:
        col_val = tl.where(col_nan, float("nan"), vmax) if CT.is_floating() else vmax
        tl.store(yv_ptr + out, col_val, mask=k_ok)


def _reduce(x, dims, out, parts_idx=None):
    """out (int64, contiguous, numel O*K) = argmax over dims of x (dims adjacent, so that
    the reduced index is the row-major flat index over them)."""
    x, [(O, so), (N, sn), (K, sk)] = _as_onk(x, dims)
    if out.numel() == 0:
        return
    if x.dtype.is_floating_point:
        ct, low = (tl.float64, torch.float64) if x.dtype == torch.float64 else (tl.float32, torch.float32), float("-inf")
    else:
        ct, low = (tl.int64, torch.int64), -(2**63)
    O, K, so, sk, block_n, block_k, num_kb, splits, chunk = _plan(O, N, K, so, sk, 128, 2048)
    programs = O * num_kb
    kw = dict(CT=ct[0], LOW=low, FROM_PARTS=parts_idx is not None, BLOCK_N=block_n, BLOCK_K=block_k)
    # partial results share x's (O, N, K) indexing with N = splits, see the second pass
    idx_in = x if parts_idx is None else parts_idx
    if splits == 1:
        _argmax_kernel[(programs, 1)](x, idx_in, out, out, N, K, num_kb, chunk, so, sn, sk, 0,
                                      WRITE_VALUES=False, **kw)
        return
    part_val = torch.empty((splits, O * K), dtype=ct[1], device=x.device)
    part_idx = torch.empty((splits, O * K), dtype=torch.int64, device=x.device)
    _argmax_kernel[(programs, splits)](x, idx_in, part_val, part_idx, N, K, num_kb, chunk, so, sn, sk,
                                       O * K, WRITE_VALUES=True, **kw)
    _reduce(part_val, [0], out, parts_idx=part_idx)  # second pass over the partial maxima


def argmax(self: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    if self.ndim == 0:
        out = torch.empty((), dtype=torch.int64, device=self.device)
        _reduce(self.reshape(1), [0], out.view(1))
        return out
    dims = list(range(self.ndim)) if dim is None else [dim % self.ndim]
    if any(self.shape[d] == 0 for d in dims):
        raise RuntimeError("argmax(): cannot reduce over a dimension of size zero")
    shape = [1 if d in dims else n for d, n in enumerate(self.shape)]
    out = torch.empty(shape, dtype=torch.int64, device=self.device)
    _reduce(self, dims, out)
    return out if keepdim else out.reshape([n for d, n in enumerate(self.shape) if d not in dims])
