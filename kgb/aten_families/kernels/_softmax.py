"""_softmax of the rowwise family: an online max and sum along the dimension, then a
write pass."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.along import _along


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, N, K, sxo, sxn, sxk, syo, syn, syk,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # The tensor is seen as (O, N, K); softmax runs along N for each (o, k). One program
    # takes one o and BLOCK_K columns k; an online max/sum pass, then a write pass.
    # 1-D grid (axis 1 of a launch grid is limited to 65535 programs on GPUs)
    pid = tl.program_id(0).to(tl.int64)
    num_kb = tl.cdiv(K, BLOCK_K)
    o = pid // num_kb
    ks = (pid % num_kb) * BLOCK_K + tl.arange(0, BLOCK_K)
    k_ok = ks < K
    x_base = x_ptr + o * sxo + ks * sxk
    y_base = y_ptr + o * syo + ks * syk
    m = tl.full([BLOCK_N, BLOCK_K], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N, BLOCK_K], tl.float32)
    for start in range(0, N, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < N)[:, None] & k_ok[None, :]
        x = tl.load(x_base[None, :] + ns[:, None] * sxn, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen only -inf keep s = 0 (avoids exp(-inf - -inf) = nan)
        dead = m_new == float("-inf")
        s = s * tl.where(dead, 0.0, tl.exp(m - m_new)) + tl.where(dead, 0.0, tl.exp(x - m_new))
        m = m_new
    col_max = tl.max(m, 0)
    col_sum = tl.sum(s * tl.where(m == float("-inf"), 0.0, tl.exp(m - col_max[None, :])), 0)
    for start in range(0, N, BLOCK_N):
        ns = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (ns < N)[:, None] & k_ok[None, :]
        x = tl.load(x_base[None, :] + ns[:, None] * sxn, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - col_max[None, :]) / col_sum[None, :]
        tl.store(y_base[None, :] + ns[:, None] * syn, y.to(y_ptr.dtype.element_ty), mask=mask)


def _softmax(self: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    out_dtype = torch.float32 if half_to_float else self.dtype
    x = self.reshape(1) if self.ndim == 0 else self
    x, (O, sxo), (N, sxn), (K, sxk) = _along(x, dim % x.ndim)
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    syo, syn, syk = N * K, K, 1
    if out.numel():
        if K == 1:
            # softmax along the last dim: let the rows play the role of the k columns so
            # that one program handles several short rows at once
            O, K, sxo, sxk, syo, syk = 1, O, 0, sxo, 0, syo
        block_n = min(triton.next_power_of_2(N), 2048)
        block_k = min(triton.next_power_of_2(K), max(1, 4096 // block_n))
        grid = (O * triton.cdiv(K, block_k),)
        _softmax_kernel[grid](x, out, N, K, sxo, sxn, sxk, syo, syn, syk,
                              BLOCK_N=block_n, BLOCK_K=block_k)
    return out
