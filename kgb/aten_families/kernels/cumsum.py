"""cumsum of the rowwise family: blocks of the dimension scanned in turn, the running
total carried from one block to the next."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.along import _along
from kgb.aten_families.kernels.tl_types import _TL


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, N, K, num_kb, sxo, sxn, sxk, syo, syn, syk,
                   CAST: tl.constexpr, ACC: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # x seen as (O, N, K), scanned along N. One program takes one o and BLOCK_K columns;
    # it scans BLOCK_N rows at a time and carries the running total to the next block.
    pid = tl.program_id(0).to(tl.int64)
    o = pid // num_kb
    ks = (pid % num_kb) * BLOCK_K + tl.arange(0, BLOCK_K)
    k_ok = ks < K
    x_base = x_ptr + o * sxo + ks * sxk
    y_base = y_ptr + o * syo + ks * syk
    carry = tl.zeros([BLOCK_K], ACC)
    for start in range(0, N, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < N)[:, None] & k_ok[None, :]
        x = tl.load(x_base[None, :] + ns[:, None] * sxn, mask=mask, other=0)
        x = x.to(CAST).to(ACC)  # dtype= converts each element before adding
        y = tl.cumsum(x, axis=0) + carry[None, :]
        tl.store(y_base[None, :] + ns[:, None] * syn, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum(self: torch.Tensor, dim: int, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    if dtype is None:
        dtype = self.dtype if self.is_floating_point() else torch.int64
    out = torch.empty(self.shape, dtype=dtype, device=self.device)
    if out.numel() == 0:
        return out
    x = self.reshape(1) if self.ndim == 0 else self
    x, (O, sxo), (N, sxn), (K, sxk) = _along(x, dim % x.ndim)
    syo, syn, syk = N * K, K, 1
    if K == 1:  # scan along the last dim: rows of the o axis become the k columns
        O, K, sxo, sxk, syo, syk = 1, O, 0, sxo, 0, syo
    acc = tl.float64 if dtype == torch.float64 else (tl.float32 if dtype.is_floating_point else tl.int64)
    if sxk == 1 and K > 1:  # keep the contiguous axis wide for coalesced loads
        block_k = min(triton.next_power_of_2(K), 128)
        block_n = min(triton.next_power_of_2(N), max(1, 2048 // block_k))
    else:
        block_n = min(triton.next_power_of_2(N), 1024)
        block_k = min(triton.next_power_of_2(K), max(1, 2048 // block_n))
    num_kb = triton.cdiv(K, block_k)
    _cumsum_kernel[(O * num_kb,)](x, out, N, K, num_kb, sxo, sxn, sxk, syo, syn, syk,
                                  CAST=_TL[dtype], ACC=acc, BLOCK_N=block_n, BLOCK_K=block_k)
    return out
