import torch
import triton
import triton.language as tl


@triton.jit
def _gptq_gemm_kernel(
    a_ptr, qw_ptr, z_ptr, s_ptr, idx_ptr, c_ptr, m, n, k, group_size,
    BITS: tl.constexpr, EXLLAMA: tl.constexpr, HAS_PERM: tl.constexpr, ZERO_OFFSET: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    PF: tl.constexpr = 32 // BITS
    MASK: tl.constexpr = (1 << BITS) - 1
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < m
    n_ok = rn < n
    z_shift = ((rn % PF) * BITS).to(tl.uint32)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)  # rows of the packed weight (sequential order if EXLLAMA)
        k_ok = kk < k
        j = kk % PF
        if EXLLAMA:
            if BITS == 4:
                field = (j % 2) * 4 + j // 2  # exllama keeps rows 0,2,4,6,1,3,5,7 in fields 0..7
            else:
                field = j
            g = kk // group_size
            if HAS_PERM:
                a_col = tl.load(idx_ptr + kk, mask=k_ok, other=0)
            else:
                a_col = kk
        else:
            field = j
            g = tl.load(idx_ptr + kk, mask=k_ok, other=0)
            a_col = kk
        words = tl.load(qw_ptr + (kk // PF).to(tl.int64)[:, None] * n + rn[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0)
        q = (words.to(tl.uint32, bitcast=True) >> (field * BITS).to(tl.uint32)[:, None]) & MASK
        zw = tl.load(z_ptr + g.to(tl.int64)[:, None] * (n // PF) + (rn // PF)[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0)
        z = ((zw.to(tl.uint32, bitcast=True) >> z_shift[None, :]) & MASK).to(tl.int32) + ZERO_OFFSET
        s = tl.load(s_ptr + g.to(tl.int64)[:, None] * n + rn[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        w = ((q.to(tl.int32) - z).to(tl.float32) * s.to(tl.float32)).to(tl.float16)
        x = tl.load(a_ptr + rm.to(tl.int64)[:, None] * k + a_col[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        acc += tl.dot(x, w)
    c = c_ptr + rm.to(tl.int64)[:, None] * n + rn[None, :]
    tl.store(c, acc.to(tl.float16), mask=m_ok[:, None] & n_ok[None, :])


def gptq_gemm(
    a: torch.Tensor, b_q_weight: torch.Tensor, b_gptq_qzeros: torch.Tensor, b_gptq_scales: torch.Tensor,
    b_g_idx: torch.Tensor, use_exllama: bool, use_v2_format: bool, bit: int,
) -> torch.Tensor:
    m, k = a.shape
    n = b_q_weight.shape[1]
    out = torch.empty((m, n), dtype=torch.float16, device=a.device)
    if out.numel() == 0:
        return out
    group_size = k // b_gptq_scales.shape[0]
    has_perm = use_exllama and b_g_idx.numel() > 0
    block_m = 16 if m <= 16 else (32 if m <= 64 else 64)
    block_n, block_k = 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _gptq_gemm_kernel[grid](
        a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx if b_g_idx.numel() > 0 else b_q_weight,
        out, m, n, k, group_size, BITS=bit, EXLLAMA=use_exllama, HAS_PERM=has_perm,
        ZERO_OFFSET=0 if use_v2_format else 1, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out
