"""The scaled int8/fp8 matmul of cutlass_scaled_mm and cutlass_scaled_mm_azp (the latter
with int8 zero points): a tiled tl.dot, then the scales, zero points and bias per tile."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_mm_kernel(
    a_ptr, b_ptr, sa_ptr, sb_ptr, adj_ptr, azp_ptr, bias_ptr, out_ptr, m, n, k, stride_am, stride_bn,
    PER_TOKEN: tl.constexpr, PER_CHANNEL: tl.constexpr, HAS_AZP: tl.constexpr, TOKEN_AZP: tl.constexpr,
    HAS_BIAS: tl.constexpr, IS_INT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < m
    n_ok = rn < n
    if IS_INT:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.int32)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < k
        # fp8 operands arrive as their uint8 bits, so that masked lanes can load as 0 (+0.0)
        a = tl.load(a_ptr + rm.to(tl.int64)[:, None] * stride_am + kk[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0)
        # b is column-major: element (kk, rn) at rn * stride_bn + kk
        b = tl.load(b_ptr + rn.to(tl.int64)[None, :] * stride_bn + kk[:, None], mask=k_ok[:, None] & n_ok[None, :], other=0)
        if IS_INT:
            acc += tl.dot(a, b, out_dtype=tl.int32)
        else:
            acc += tl.dot(a.to(tl.float8e4nv, bitcast=True), b.to(tl.float8e4nv, bitcast=True))
    if HAS_AZP:  # int8 only: take the zero points' share out of the integer sums
        adj = tl.load(adj_ptr + rn, mask=n_ok, other=0)
        if TOKEN_AZP:
            zp = tl.load(azp_ptr + rm, mask=m_ok, other=0)
            acc -= zp[:, None] * adj[None, :]
        else:
            acc -= adj[None, :]
    if PER_TOKEN:
        sa = tl.load(sa_ptr + rm, mask=m_ok, other=0.0)
    else:
        sa = tl.load(sa_ptr + rm * 0)
    if PER_CHANNEL:
        sb = tl.load(sb_ptr + rn, mask=n_ok, other=0.0)
    else:
        sb = tl.load(sb_ptr + rn * 0)
    res = sa[:, None] * (sb[None, :] * acc.to(tl.float32))
    if HAS_BIAS:
        res += tl.load(bias_ptr + rn, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    o = out_ptr + rm.to(tl.int64)[:, None] * n + rn[None, :]
    tl.store(o, res.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def _scaled_mm(out, a, b, a_scales, b_scales, bias, azp_adj=None, azp=None) -> None:
    """out = a_scales * b_scales * (a @ b - azp (x) azp_adj) + bias; the zero-point term only
    where azp_adj is given (azp: per token, else one zero point folded into azp_adj)."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return
    block_m = 16 if m <= 16 else (64 if m <= 128 else 128)
    block_n, block_k = 64, 64
    is_int = a.dtype == torch.int8
    if not is_int:
        a, b = a.view(torch.uint8), b.view(torch.uint8)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    adj = azp_adj if azp_adj is not None else out
    _scaled_mm_kernel[grid](
        a, b, a_scales, b_scales, adj, azp if azp is not None else adj, bias if bias is not None else out,
        out, m, n, k, a.stride(0), b.stride(1), PER_TOKEN=a_scales.numel() > 1, PER_CHANNEL=b_scales.numel() > 1,
        HAS_AZP=azp_adj is not None, TOKEN_AZP=azp is not None, HAS_BIAS=bias is not None, IS_INT=is_int,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
