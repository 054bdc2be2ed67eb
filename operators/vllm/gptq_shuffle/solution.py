import torch
import triton
import triton.language as tl


@triton.jit
def _shuffle_kernel(
    src_ptr, perm_ptr, out_ptr, rows, n, BITS: tl.constexpr, HAS_PERM: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr,
):
    PF: tl.constexpr = 32 // BITS
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = (r < rows)[:, None] & (c < n)[None, :]
    acc = tl.zeros([BLOCK_R, BLOCK_N], tl.uint32)
    for p in tl.static_range(PF):
        if BITS == 4:
            k_seq = r * PF + (p % 4) * 2 + p // 4  # exllama's field order
        else:
            k_seq = r * PF + p
        if HAS_PERM:
            k = tl.load(perm_ptr + k_seq, mask=r < rows, other=0)
        else:
            k = k_seq
        word = tl.load(src_ptr + (k // PF).to(tl.int64)[:, None] * n + c[None, :], mask=ok, other=0)
        shift = ((k % PF) * BITS).to(tl.uint32)[:, None]
        val = (word.to(tl.uint32, bitcast=True) >> shift) & ((1 << BITS) - 1)
        acc = acc | (val << (p * BITS))
    tl.store(out_ptr + r.to(tl.int64)[:, None] * n + c[None, :], acc.to(tl.int32, bitcast=True), mask=ok)


def gptq_shuffle(q_weight: torch.Tensor, q_perm: torch.Tensor, bit: int) -> None:
    rows, n = q_weight.shape
    if q_weight.numel() == 0:
        return
    has_perm = q_perm.numel() > 0
    if bit == 8 and not has_perm:
        return  # 8-bit words keep the GPTQ order
    # rows move between words, so the result goes to a scratch buffer first
    out = torch.empty_like(q_weight)
    block_r, block_n = 8, 64
    grid = (triton.cdiv(rows, block_r), triton.cdiv(n, block_n))
    _shuffle_kernel[grid](
        q_weight, q_perm if has_perm else q_weight, out, rows, n, BITS=bit, HAS_PERM=has_perm,
        BLOCK_R=block_r, BLOCK_N=block_n,
    )
    q_weight.copy_(out)
