import math

import torch
import triton
import triton.language as tl

_NO_INDEX = tl.constexpr(2**62)  # sentinel: this lane has seen no element yet


@triton.jit
def _argmax_kernel(x_ptr, i_ptr, yv_ptr, yi_ptr, N, K, num_kb, chunk, sxo, sxn, sxk, y_split_stride,
                   CT: tl.constexpr, LOW: tl.constexpr, FROM_PARTS: tl.constexpr, WRITE_VALUES: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # x seen as (O, N, K); for each (o, k): the largest value over this split's n-range and
    # its index (n itself, or read from i_ptr when reducing partial results). NaN beats
    # every number; ties keep the smaller index. Values are compared in CT.
    pid = tl.program_id(0).to(tl.int64)
    split = tl.program_id(1).to(tl.int64)
    o = pid // num_kb
    ks = (pid % num_kb) * BLOCK_K + tl.arange(0, BLOCK_K)
    k_ok = ks < K
    base = o * sxo + ks * sxk
    n_lo = split * chunk
    n_hi = tl.minimum(n_lo + chunk, N)
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
    out = split * y_split_stride + o * K + ks
    tl.store(yi_ptr + out, col_idx, mask=k_ok)
    if WRITE_VALUES:
        col_val = tl.where(col_nan, float("nan"), vmax) if CT.is_floating() else vmax
        tl.store(yv_ptr + out, col_val, mask=k_ok)


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def _as_onk(x, dims):
    """View x as (O, N, K) with the reduced dims as N: (x, [(O, so), (N, sn), (K, sk)])."""
    kept = [d for d in range(x.ndim) if d not in dims]
    if dims == list(range(dims[0], dims[-1] + 1)):
        cuts = (0, dims[0], dims[-1] + 1, x.ndim)
    else:  # reduced dims not adjacent: move them last
        x = x.permute(kept + dims)
        cuts = (0, len(kept), x.ndim, x.ndim)
    for _ in range(2):
        parts = [_merge(x.shape[a:b], x.stride()[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
        if None not in parts:
            return x, parts
        x = x.contiguous()
    raise AssertionError("a contiguous tensor always merges")


def _reduce(x, dims, out, parts_idx=None):
    """out (int64, contiguous, numel O*K) = argmax over dims of x (dims adjacent, so that
    the reduced index is the row-major flat index over them)."""
    x, [(O, so), (N, sn), (K, sk)] = _as_onk(x, dims)
    if out.numel() == 0:
        return
    if K == 1:  # reduce the last dims: rows of the o axis become the k columns
        O, K, so, sk = 1, O, 0, so
    if x.dtype.is_floating_point:
        ct, low = (tl.float64, torch.float64) if x.dtype == torch.float64 else (tl.float32, torch.float32), float("-inf")
    else:
        ct, low = (tl.int64, torch.int64), -(2**63)
    if sk == 1 and K > 1:  # keep the contiguous axis wide for coalesced loads
        block_k = min(triton.next_power_of_2(K), 128)
        block_n = min(triton.next_power_of_2(N), max(1, 2048 // block_k))
    else:
        block_n = min(triton.next_power_of_2(N), 1024)
        block_k = min(triton.next_power_of_2(K), max(1, 2048 // block_n))
    num_kb = triton.cdiv(K, block_k)
    programs = O * num_kb
    # few outputs and a long reduction: split N over more programs, then reduce the partials
    splits = 1
    if programs < 256 and N > 4 * block_n:
        splits = min(triton.cdiv(N, 4 * block_n), triton.cdiv(1024, programs))
    chunk = triton.cdiv(triton.cdiv(N, splits), block_n) * block_n
    splits = triton.cdiv(N, chunk)
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
