import torch
import triton
import triton.language as tl


@triton.jit
def _awq_split_kernel(
    x_ptr, qw_ptr, s_ptr, z_ptr, part_ptr, m, n, k, group, splits,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # program (m-block, n-block, split): float32 sum over the split's 32-row chunks
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    split = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, 32)
    m_ok = rm < m
    n_ok = rn < n
    # AWQ keeps column p of a word of eight in field (p % 2) * 4 + p // 2
    p = rn % 8
    shift = (((p % 2) * 4 + p // 2) * 4).to(tl.uint32)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for chunk in range(split, k // 32, splits):
        kk = chunk * 32 + rk
        x = tl.load(x_ptr + rm[:, None].to(tl.int64) * k + kk[None, :], mask=m_ok[:, None], other=0.0)
        words = tl.load(qw_ptr + kk[:, None].to(tl.int64) * (n // 8) + (rn // 8)[None, :], mask=n_ok[None, :], other=0)
        q = (words.to(tl.uint32, bitcast=True) >> shift[None, :]) & 15
        g = chunk * 32 // group  # a chunk never straddles two groups
        zw = tl.load(z_ptr + g * (n // 8) + rn // 8, mask=n_ok, other=0)
        z = (zw.to(tl.uint32, bitcast=True) >> shift) & 15
        s = tl.load(s_ptr + g * n + rn, mask=n_ok, other=0.0).to(tl.float32)
        diff = q.to(tl.int32) - z.to(tl.int32)[None, :]
        w = (diff.to(tl.float32) * s[None, :]).to(tl.float16)
        acc += tl.dot(x, w)
    out = part_ptr + split * m * n + rm[:, None].to(tl.int64) * n + rn[None, :]
    tl.store(out, acc.to(tl.float16), mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def _sum_splits_kernel(part_ptr, out_ptr, numel, splits, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < numel
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(splits):
        acc += tl.load(part_ptr + s * numel + offs, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(tl.float16), mask=ok)


def awq_gemm(
    _in_feats: torch.Tensor, _kernel: torch.Tensor, _scaling_factors: torch.Tensor,
    _zeros: torch.Tensor, split_k_iters: int,
) -> torch.Tensor:
    m, k = _in_feats.shape
    n = _kernel.shape[1] * 8
    group = k // _scaling_factors.shape[0]
    out = torch.empty((m, n), dtype=torch.float16, device=_in_feats.device)
    if out.numel() == 0:
        return out
    partial = torch.empty((split_k_iters, m, n), dtype=torch.float16, device=_in_feats.device)
    block_m = 16 if m <= 16 else 32
    block_n = 64
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n), split_k_iters)
    _awq_split_kernel[grid](
        _in_feats, _kernel, _scaling_factors, _zeros, partial, m, n, k, group, split_k_iters,
        BLOCK_M=block_m, BLOCK_N=block_n,
    )
    block = 1024
    _sum_splits_kernel[(triton.cdiv(m * n, block),)](partial, out, m * n, split_k_iters, BLOCK=block)
    return out
