"""The own part of vllm::allspark_w8a16_gemm's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.round_to_dtype import _round_to_dtype


@triton.jit
def _allspark_kernel(
    a_ptr, q_ptr, s_ptr, z_ptr, out_ptr, m, n, k, HAS_ZP: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < m
    n_ok = rn < n
    # column parts of the n32k16 index and of the parameter order
    nr = rn % 128
    j = rn % 16
    lane_n = (nr // 32) * 8 + (nr % 32) // 16
    p_lane = nr % 32
    p_off = rn - nr + (nr // 32) * 32 + (p_lane % 8) * 4 + p_lane // 8
    s = tl.load(s_ptr + p_off, mask=n_ok, other=0.0)
    if HAS_ZP:
        z = tl.load(z_ptr + p_off, mask=n_ok, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        k_ok = kk < k
        kq = kk % 16
        lane = lane_n[None, :] + (((kq % 8) // 2) * 2)[:, None]
        row = (rn // 128)[None, :] * 32 + (lane // 8) * 8 + (j % 8)[None, :]
        col = ((kk // 64) * 256 + ((kk % 64) // 16) * 64 + (kq // 8) * 2 + kq % 2)[:, None] + (lane % 8) * 8 + ((j // 8) * 4)[None, :]
        q = tl.load(q_ptr + row.to(tl.int64) * (4 * k) + col, mask=k_ok[:, None] & n_ok[None, :], other=128)
        x = tl.load(a_ptr + rm.to(tl.int64)[:, None] * k + kk[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        w = q.to(tl.int32) - 128
        if HAS_ZP:
            # each step rounds to a's dtype, as the kernel's half-precision arithmetic does
            w = _round_to_dtype(w.to(tl.float32) - z[None, :], x.dtype).to(tl.float32)
        else:
            w = w.to(tl.float32)
        wq = _round_to_dtype(w * s.to(tl.float32)[None, :], x.dtype)
        acc += tl.dot(x, wq)
    o = out_ptr + rm.to(tl.int64)[:, None] * n + rn[None, :]
    tl.store(o, acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def allspark_w8a16_gemm(
    a: torch.Tensor, b_qweight: torch.Tensor, b_scales: torch.Tensor, b_qzeros: torch.Tensor | None, n: int,
    group_size: int, sm_count: int, sm_version: int, CUBLAS_M_THRESHOLD: int, has_zp: bool, n32k16_reorder: bool,
) -> torch.Tensor:
    if group_size != -1:
        raise NotImplementedError("AllSpark supports per-channel scales only")
    m, k = a.shape
    block_m = 16 if m <= 16 else (32 if m <= 64 else 64)
    block_n, block_k = 64, 32
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _allspark_kernel[grid](
        a, b_qweight, b_scales, b_qzeros if has_zp else b_scales, out, m, n, k, HAS_ZP=has_zp,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out
