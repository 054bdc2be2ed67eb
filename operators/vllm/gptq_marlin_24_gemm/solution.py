import torch
import triton
import triton.language as tl

UINT4B8 = 1125899907892224
UINT8B128 = 1125899923621888


@triton.jit
def _marlin_24_gemm_kernel(
    a_ptr, qw_ptr, meta_ptr, s_ptr, out_ptr, m, n, k,
    BITS: tl.constexpr, CHANNELWISE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    PF: tl.constexpr = 32 // BITS
    WPC: tl.constexpr = 1024 // PF  # words per chunk of 16 compressed rows x 64 columns
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < m
    n_ok = rn < n
    # the meta row R of each column (before the 2 x 2 swap, which depends on the k block)
    meta_r = 64 * (rn // 64) + 32 * ((rn // 2) % 2) + 4 * ((rn % 64) // 8) + 2 * (rn % 2) + (rn // 4) % 2
    j = rn % 64
    row_words = n * 16 // PF
    col_words = (rn // 64) * WPC
    if CHANNELWISE:
        s_col = rn
    else:
        # grouped scales: column c of a chunk of 8 sits at position (c % 4) * 2 + c // 4
        s_col = rn - rn % 8 + (rn % 4) * 2 + (rn % 8) // 4
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        # which of its group's two stored values (if any) row kk of column rn is
        cm = (kk // 16)[:, None]
        r_even = (meta_r % 2 == 0)[None, :]
        swap = r_even & (cm % 2 == 1)
        back = (~r_even) & (cm % 2 == 0)
        mr = meta_r[None, :] + swap.to(tl.int32) - back.to(tl.int32)
        mc = cm - swap.to(tl.int32) + back.to(tl.int32)
        elem = tl.load(meta_ptr + (mc // 2) * (2 * n) + 2 * mr + mc % 2, mask=n_ok[None, :], other=0)
        nib = (elem.to(tl.int32) & 0xFFFF) >> (4 * ((kk // 4) % 4))[:, None]
        i0 = nib & 3
        i1 = (nib >> 2) & 3
        pos = (kk % 4)[:, None]
        stored = (pos == i0) | (pos == i1)
        kc = 2 * (kk // 4)[:, None] + (pos == i1).to(tl.int32)
        # where compressed code (kc, rn) sits in Marlin's 2:4 tile order
        r = kc % 16
        i = 4 * (j // 8)[None, :] + (r % 8) // 2
        e = 4 * ((j % 8) // 4)[None, :] + r % 2 + 2 * (r // 8)
        if BITS == 4:
            word = i * 4 + (j % 4)[None, :]
            field = (e % 2) * 4 + e // 2
        else:
            word = i * 8 + (j % 4)[None, :] * 2 + e // 4
            field = (e % 2) * 2 + (e % 4) // 2
        offs = (kc // 16).to(tl.int64) * row_words + col_words[None, :] + word
        words = tl.load(qw_ptr + offs, mask=stored & n_ok[None, :], other=0)
        code = (words.to(tl.uint32, bitcast=True) >> (field * BITS).to(tl.uint32)) & ((1 << BITS) - 1)
        w = tl.where(stored, code.to(tl.int32) - (1 << (BITS - 1)), 0)
        x = tl.load(a_ptr + rm.to(tl.int64)[:, None] * k + kk[None, :], mask=m_ok[:, None], other=0.0)
        if CHANNELWISE:
            acc += tl.dot(x, w.to(tl.float16))  # |w| <= 128: exact in float16
        else:
            grp = kk // 128
            s = tl.load(s_ptr + grp.to(tl.int64)[:, None] * n + s_col[None, :], mask=n_ok[None, :], other=0.0)
            acc += tl.dot(x, (w.to(tl.float32) * s.to(tl.float32)).to(tl.float16))
    if CHANNELWISE:
        s = tl.load(s_ptr + s_col, mask=n_ok, other=0.0).to(tl.float32)[None, :]
        if BITS == 4:
            # Marlin rounds the sum to float16 first, then scales in float16
            acc = acc.to(tl.float16).to(tl.float32) * s
        else:
            acc = acc * s
    o = out_ptr + rm.to(tl.int64)[:, None] * n + rn[None, :]
    tl.store(o, acc.to(tl.float16), mask=m_ok[:, None] & n_ok[None, :])


def gptq_marlin_24_gemm(a, b_q_weight, b_meta, b_scales, workspace, b_q_type_id, size_m, size_n, size_k):
    if b_q_type_id not in (UINT4B8, UINT8B128):
        raise NotImplementedError("gptq_marlin_24_gemm supports uint4b8 and uint8b128 only")
    bits = 4 if b_q_type_id == UINT4B8 else 8
    out = torch.empty((size_m, size_n), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    block_m = 16 if size_m <= 16 else (32 if size_m <= 32 else 64)
    block_n, block_k = 64, 64
    grid = (triton.cdiv(size_m, block_m), triton.cdiv(size_n, block_n))
    _marlin_24_gemm_kernel[grid](
        a, b_q_weight, b_meta, b_scales, out, size_m, size_n, size_k,
        BITS=bits, CHANNELWISE=b_scales.shape[0] == 1,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out
