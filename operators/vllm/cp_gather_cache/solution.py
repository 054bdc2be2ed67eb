import triton
import triton.language as tl


@triton.jit
def _cp_gather_cache_kernel(
    src_ptr, dst_ptr, table_ptr, cu_ptr, starts_ptr, total, batch, entry, block_size,
    table_stride, block_stride, slot_stride, dst_stride,
    HAS_STARTS: tl.constexpr, TOK: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_E: tl.constexpr,
):
    # TOK gathered tokens per program; a token's sequence is the number of sequence ends
    # (cu_seq_lens[1:]) at or before it
    tok = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    ok = tok < total
    b_idx = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + 1 + b_idx, mask=b_idx < batch, other=2147483647).to(tl.int64)
    seq = tl.sum((ends[None, :] <= tok[:, None]).to(tl.int64), axis=1)
    seq = tl.minimum(seq, batch - 1)
    pos = tok - tl.load(cu_ptr + seq, mask=ok, other=0).to(tl.int64)
    if HAS_STARTS:
        pos += tl.load(starts_ptr + seq, mask=ok, other=0).to(tl.int64)
    block = tl.load(table_ptr + seq * table_stride + pos // block_size, mask=ok, other=0).to(tl.int64)
    src_row = block * block_stride + (pos % block_size) * slot_stride
    for start in range(0, entry, BLOCK_E):
        e = start + tl.arange(0, BLOCK_E)
        mask = ok[:, None] & (e < entry)[None, :]
        v = tl.load(src_ptr + src_row[:, None] + e[None, :], mask=mask)
        tl.store(dst_ptr + tok[:, None] * dst_stride + e[None, :], v, mask=mask)


def cp_gather_cache(src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts=None) -> None:
    total = dst.shape[0]
    if total == 0 or batch_size == 0:
        return
    entry = src_cache[0, 0].numel()
    block_e = min(triton.next_power_of_2(entry), 1024)
    tok = max(1, min(16, 2048 // block_e))
    _cp_gather_cache_kernel[(triton.cdiv(total, tok),)](
        src_cache, dst, block_table, cu_seq_lens, seq_starts if seq_starts is not None else cu_seq_lens,
        total, batch_size, entry, src_cache.shape[1], block_table.stride(0), src_cache.stride(0),
        src_cache.stride(1), dst.stride(0), HAS_STARTS=seq_starts is not None, TOK=tok,
        BLOCK_B=triton.next_power_of_2(batch_size), BLOCK_E=block_e,
    )
