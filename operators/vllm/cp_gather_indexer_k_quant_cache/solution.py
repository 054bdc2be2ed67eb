import triton
import triton.language as tl


@triton.jit
def _gather_indexer_kernel(
    cache_ptr, k_ptr, scale_ptr, table_ptr, cu_ptr, total, batch, head_dim, scale_bytes,
    block_size, table_stride, block_stride,
    TOK: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr,
):
    # TOK gathered tokens per program; a token's sequence is the number of sequence ends
    # (cu_seq_lens[1:]) at or before it
    tok = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    ok = tok < total
    b_idx = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + 1 + b_idx, mask=b_idx < batch, other=2147483647).to(tl.int64)
    seq = tl.minimum(tl.sum((ends[None, :] <= tok[:, None]).to(tl.int64), axis=1), batch - 1)
    pos = tok - tl.load(cu_ptr + seq, mask=ok, other=0).to(tl.int64)
    block = tl.load(table_ptr + seq * table_stride + pos // block_size, mask=ok, other=0).to(tl.int64)
    slot = pos % block_size
    base = block * block_stride
    d = tl.arange(0, BLOCK_D)
    for start in range(0, head_dim, BLOCK_D):
        c = start + d
        mask = ok[:, None] & (c < head_dim)[None, :]
        v = tl.load(cache_ptr + (base + slot * head_dim)[:, None] + c[None, :], mask=mask)
        tl.store(k_ptr + tok[:, None] * head_dim + c[None, :], v, mask=mask)
    s = tl.arange(0, BLOCK_S)
    mask = ok[:, None] & (s < scale_bytes)[None, :]
    src = base + block_size * head_dim + slot * scale_bytes
    v = tl.load(cache_ptr + src[:, None] + s[None, :], mask=mask)
    tl.store(scale_ptr + tok[:, None] * scale_bytes + s[None, :], v, mask=mask)


def cp_gather_indexer_k_quant_cache(kv_cache, dst_k, dst_scale, block_table, cu_seq_lens) -> None:
    total, head_dim = dst_k.shape
    batch = block_table.shape[0]
    if total == 0 or batch == 0:
        return
    block_d = min(triton.next_power_of_2(head_dim), 512)
    tok = 16
    _gather_indexer_kernel[(triton.cdiv(total, tok),)](
        kv_cache, dst_k, dst_scale, block_table, cu_seq_lens, total, batch,
        head_dim, dst_scale.shape[1], kv_cache.shape[1], block_table.stride(0), kv_cache.stride(0),
        TOK=tok, BLOCK_B=triton.next_power_of_2(batch), BLOCK_D=block_d,
        BLOCK_S=triton.next_power_of_2(dst_scale.shape[1]),
    )
