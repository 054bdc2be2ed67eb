"""The own part of vllm::gptq_marlin_gemm's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.round_to_dtype import _round_to_dtype

UINT4B8 = 1125899907892224
UINT8B128 = 1125899923621888


@triton.jit
def _marlin_gemm_kernel(
    a_ptr, qw_ptr, s_ptr, bias_ptr, perm_ptr, gidx_ptr, out_ptr, m, n, k, group_size,
    BITS: tl.constexpr, CHANNELWISE: tl.constexpr, HAS_PERM: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    PF: tl.constexpr = 32 // BITS
    WPT: tl.constexpr = 1024 // PF  # words per 16 x 64 tile
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < m
    n_ok = rn < n
    # where column n sits inside its tile's fragments
    c = rn % 64
    w = c // 16
    hi = (c % 16) // 8  # 1: the fragment's second column (c + 8)
    t_col = c % 8
    # Marlin's orders: channelwise scales and the bias put column 2i + (0, 1, 8, 9, 16, 17,
    # 24, 25)[j] of a chunk of 32 at position 8i + j; grouped scales transpose 8 x 8 inside
    # chunks of 64
    p32 = rn % 32
    single_col = rn - p32 + 8 * ((p32 % 8) // 2) + (p32 % 2) + 2 * (p32 // 8)
    if CHANNELWISE:
        s_col = single_col
    else:
        p = rn % 64
        s_col = rn - p + (p % 8) * 8 + p // 8
    row_words = n * 16 // PF
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        r = kk % 16
        sub = (r % 2) + 2 * (r // 8)
        t = t_col[None, :] * 4 + ((r % 8) // 2)[:, None]
        v = hi[None, :] * 4 + sub[:, None]
        if BITS == 4:
            word = t * 4 + w[None, :]
            field = (v % 2) * 4 + v // 2
        else:
            word = t * 8 + w[None, :] * 2 + v // 4
            field = ((v % 4) % 2) * 2 + (v % 4) // 2
        offs = (kk // 16).to(tl.int64)[:, None] * row_words + (rn // 64)[None, :] * WPT + word
        words = tl.load(qw_ptr + offs, mask=n_ok[None, :], other=0)
        q = (words.to(tl.uint32, bitcast=True) >> (field * BITS).to(tl.uint32)) & ((1 << BITS) - 1)
        wint = q.to(tl.int32) - (1 << (BITS - 1))
        if HAS_PERM:
            cols = tl.load(perm_ptr + kk)
            grp = tl.load(gidx_ptr + kk)
        else:
            cols = kk
            grp = kk // group_size
        x = tl.load(a_ptr + rm.to(tl.int64)[:, None] * k + cols[None, :], mask=m_ok[:, None], other=0.0)
        if CHANNELWISE:
            acc += tl.dot(x, wint.to(tl.float32).to(x.dtype))  # |q - bias| <= 128: exact in half types
        else:
            s = tl.load(s_ptr + grp.to(tl.int64)[:, None] * n + s_col[None, :], mask=n_ok[None, :], other=0.0)
            wq = _round_to_dtype(wint.to(tl.float32) * s.to(tl.float32), x.dtype)
            acc += tl.dot(x, wq)
    if CHANNELWISE:
        acc = acc * tl.load(s_ptr + s_col, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    if HAS_BIAS:
        acc += tl.load(bias_ptr + single_col, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    o = out_ptr + rm.to(tl.int64)[:, None] * n + rn[None, :]
    tl.store(o, acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def gptq_marlin_gemm(
    a, c_or_none, b_q_weight, b_bias_or_none, b_scales, a_scales, global_scale, b_zeros_or_none,
    g_idx_or_none, perm_or_none, workspace, b_type_id, size_m, size_n, size_k, is_k_full,
    use_atomic_add, use_fp32_reduce, is_zp_float,
):
    if b_type_id not in (UINT4B8, UINT8B128) or b_zeros_or_none is not None or a_scales is not None:
        raise NotImplementedError("only the symmetric GPTQ types uint4b8 and uint8b128")
    bits = 4 if b_type_id == UINT4B8 else 8
    out = torch.empty((size_m, size_n), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    groups = b_scales.shape[0]
    has_perm = perm_or_none is not None and perm_or_none.numel() > 0
    block_m = 16 if size_m <= 16 else (32 if size_m <= 64 else 64)
    block_n, block_k = 64, 32
    grid = (triton.cdiv(size_m, block_m), triton.cdiv(size_n, block_n))
    _marlin_gemm_kernel[grid](
        a, b_q_weight, b_scales, b_bias_or_none if b_bias_or_none is not None else b_scales,
        perm_or_none if has_perm else b_q_weight, g_idx_or_none if has_perm else b_q_weight, out,
        size_m, size_n, size_k, size_k // groups, BITS=bits, CHANNELWISE=groups == 1, HAS_PERM=has_perm,
        HAS_BIAS=b_bias_or_none is not None, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out
