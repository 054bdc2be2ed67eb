"""Repacking every expert's GPTQ or AWQ 4/8-bit weights into Marlin's tiled layout: the
kernel of gptq_marlin_moe_repack and awq_marlin_moe_repack, which differ only in where a
(row, column) code sits in the source words."""

import torch
import triton
import triton.language as tl


@triton.jit
def _repack_kernel(
    src_ptr, perm_ptr, out_ptr, size_k, size_n, row_words,
    BITS: tl.constexpr, AWQ: tl.constexpr, HAS_PERM: tl.constexpr, BLOCK: tl.constexpr,
):
    # one program: BLOCK output words of one expert's row kt (grid: words, kt, expert)
    e = tl.program_id(2).to(tl.int64)
    kt = tl.program_id(1)
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = r < row_words
    PF: tl.constexpr = 32 // BITS
    WPT: tl.constexpr = 1024 // PF
    nt = r // WPT
    j = r % WPT
    if BITS == 4:
        t = j // 4
        w = j % 4
        half = j * 0
    else:
        t = j // 8
        w = (j % 8) // 2
        half = j % 2
    if AWQ:  # an expert's words: [size_k, size_n // PF], packed along n
        src = src_ptr + e * size_k * (size_n // PF)
    else:  # [size_k // PF, size_n], packed along k
        src = src_ptr + e * (size_k // PF) * size_n
    acc = tl.zeros([BLOCK], tl.uint32)
    for i in tl.static_range(PF):
        if BITS == 4:
            v = (i % 4) * 2 + i // 4  # fields hold fragment values 0,2,4,6,1,3,5,7
        else:
            v = half * 4 + (i % 2) * 2 + i // 2  # 0,2,1,3 of each half
        sub = v % 4
        row = kt * 16 + (t % 4) * 2 + (sub % 2) + (sub // 2) * 8
        col = nt * 64 + w * 16 + t // 4 + (v // 4) * 8
        if AWQ:
            word = tl.load(src + row.to(tl.int64) * (size_n // PF) + col // PF, mask=ok, other=0)
            # AWQ keeps column p of a word in field (p % 2) * (PF // 2) + p // 2
            p = col % PF
            field = (p % 2) * (PF // 2) + p // 2
        else:
            if HAS_PERM:
                k = tl.load(perm_ptr + e * size_k + row, mask=ok, other=0)
            else:
                k = row
            word = tl.load(src + (k // PF).to(tl.int64) * size_n + col, mask=ok, other=0)
            field = k % PF
        val = (word.to(tl.uint32, bitcast=True) >> (field * BITS).to(tl.uint32)) & ((1 << BITS) - 1)
        acc = acc | (val << (i * BITS))
    out = out_ptr + (e * (size_k // 16) + kt) * row_words
    tl.store(out + r, acc.to(tl.int32, bitcast=True), mask=ok)


def _repack(b_q_weight, perm, size_k, size_n, num_bits, is_a_8bit, awq):
    """perm: the experts' act-order permutations of k (GPTQ only), or None."""
    if is_a_8bit:
        raise NotImplementedError("the 8-bit-activation layout is not implemented")
    experts = b_q_weight.shape[0]
    row_words = size_n * num_bits // 2
    out = torch.empty((experts, size_k // 16, row_words), dtype=torch.int32, device=b_q_weight.device)
    if out.numel() == 0:
        return out
    block = 256
    grid = (triton.cdiv(row_words, block), size_k // 16, experts)
    _repack_kernel[grid](
        b_q_weight, perm if perm is not None else b_q_weight, out, size_k, size_n, row_words,
        BITS=num_bits, AWQ=awq, HAS_PERM=perm is not None, BLOCK=block,
    )
    return out
