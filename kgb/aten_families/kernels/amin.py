"""amin of the extremum family: the minimum over N of x seen as (O, N, K), NaN
propagating, long reductions split and their partial minima reduced again."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.onk import _as_onk, _onk_block, _plan


@triton.jit
def _amin_kernel(x_ptr, y_ptr, N, K, num_kb, chunk, sxo, sxn, sxk, y_split_stride,
                 CT: tl.constexpr, BIG: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # x seen as (O, N, K); y[split, o, k] = min over this split's n-range of x[o, n, k],
    # compared in CT (float32/float64 or int64). NaN is tracked apart because the GPU's
    # min instruction drops NaN operands, while amin must propagate them.
    offs, out, k_ok, n_lo, n_hi = _onk_block(N, K, num_kb, chunk, sxo, sxk, y_split_stride, BLOCK_K)
    base = x_ptr + offs
    acc = tl.full([BLOCK_N, BLOCK_K], BIG, CT)
    nan = tl.zeros([BLOCK_N, BLOCK_K], tl.int32)
    for start in range(n_lo, n_hi, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < n_hi)[:, None] & k_ok[None, :]
        x = tl.load(base[None, :] + ns[:, None] * sxn, mask=mask, other=0).to(CT)
        x = tl.where(mask, x, BIG)
        nan = tl.maximum(nan, (x != x).to(tl.int32))
        acc = tl.minimum(acc, x)
    res = tl.min(acc, 0)
    if CT.is_floating():
        res = tl.where(tl.max(nan, 0) > 0, float("nan"), res)
    tl.store(y_ptr + out, res.to(y_ptr.dtype.element_ty), mask=k_ok)


def _reduce(x, dims, out):
    """out (contiguous, numel O*K) = min over dims of x."""
    x, [(O, so), (N, sn), (K, sk)] = _as_onk(x, dims)
    if out.numel() == 0:
        return
    if x.dtype.is_floating_point:
        ct, big, part_dtype = (tl.float64, float("inf"), torch.float64) if x.dtype == torch.float64 else (tl.float32, float("inf"), torch.float32)
    else:
        ct, big, part_dtype = tl.int64, 2**63 - 1, torch.int64
    O, K, so, sk, block_n, block_k, num_kb, splits, chunk = _plan(O, N, K, so, sk, 256, 4096)
    programs = O * num_kb
    kw = dict(CT=ct, BIG=big, BLOCK_N=block_n, BLOCK_K=block_k)
    if splits == 1:
        _amin_kernel[(programs, 1)](x, out, N, K, num_kb, chunk, so, sn, sk, 0, **kw)
        return
    part = torch.empty((splits, O * K), dtype=part_dtype, device=x.device)
    _amin_kernel[(programs, splits)](x, part, N, K, num_kb, chunk, so, sn, sk, O * K, **kw)
    _reduce(part, [0], out)  # second pass over the partial minima


def amin(self: torch.Tensor, dim: list[int] = (), keepdim: bool = False) -> torch.Tensor:
    if self.ndim == 0:
        out = torch.empty((), dtype=self.dtype, device=self.device)
        _reduce(self.reshape(1), [0], out.view(1))
        return out
    dims = sorted({d % self.ndim for d in dim}) if len(dim) else list(range(self.ndim))
    if any(self.shape[d] == 0 for d in dims):
        raise RuntimeError("amin(): cannot reduce over a dimension of size zero")
    shape = [1 if d in dims else n for d, n in enumerate(self.shape)]
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    _reduce(self, dims, out)
    return out if keepdim else out.reshape([n for d, n in enumerate(self.shape) if d not in dims])
