import triton
import triton.language as tl


@triton.jit
def _paged_attention_kernel(
    out_ptr, q_ptr, k_ptr, v_ptr, tables_ptr, lens_ptr, alibi_ptr, scale,
    q_seq_stride, kv_block_stride, kv_head_stride, max_blocks, num_heads,
    HAS_ALIBI: tl.constexpr, GROUP: tl.constexpr, BLOCK_G: tl.constexpr, HEAD: tl.constexpr,
    BLOCK_D: tl.constexpr, BS: tl.constexpr, X: tl.constexpr,
):
    # One program per (KV head, sequence): the GROUP query heads that share the KV head read
    # each cache block once. Online softmax over the sequence's blocks, float32 throughout.
    kvh = tl.program_id(0)
    seq = tl.program_id(1)
    length = tl.load(lens_ptr + seq)
    g = tl.arange(0, BLOCK_G)
    heads = kvh * GROUP + g
    g_ok = g < GROUP
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD
    t = tl.arange(0, BS)
    q = tl.load(q_ptr + seq.to(tl.int64) * q_seq_stride + heads[:, None] * HEAD + d[None, :],
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
    if HAS_ALIBI:
        slope = tl.load(alibi_ptr + heads, mask=g_ok, other=0.0)
    m = tl.full([BLOCK_G], -float("inf"), tl.float32)
    total = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    # key element d of slot t: [d // X, t, d % X] inside the (block, head) tile
    k_offs = (d // X)[None, :] * (BS * X) + t[:, None] * X + (d % X)[None, :]
    v_offs = d[None, :] * BS + t[:, None]
    n_blocks = tl.cdiv(length, BS)
    for blk in range(0, n_blocks):
        phys = tl.load(tables_ptr + seq.to(tl.int64) * max_blocks + blk).to(tl.int64)
        base = phys * kv_block_stride + kvh * kv_head_stride
        tok = blk * BS + t
        t_ok = tok < length
        kv_mask = t_ok[:, None] & d_ok[None, :]
        k = tl.load(k_ptr + base + k_offs, mask=kv_mask, other=0.0).to(tl.float32)  # [BS, D]
        v = tl.load(v_ptr + base + v_offs, mask=kv_mask, other=0.0).to(tl.float32)
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale  # [G, BS]
        if HAS_ALIBI:
            s += slope[:, None] * (tok - length + 1).to(tl.float32)[None, :]
        s = tl.where(t_ok[None, :], s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m = m_new
    res = acc / (total + 1e-6)[:, None]
    tl.store(out_ptr + (seq.to(tl.int64) * num_heads + heads)[:, None] * HEAD + d[None, :],
             res.to(out_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])


def paged_attention_v1(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, block_size,
                       max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0,
                       blocksparse_local_blocks=0, blocksparse_vert_stride=0, blocksparse_block_size=64,
                       blocksparse_head_sliding_step=0):
    num_seqs, num_heads, head_size = query.shape
    group = num_heads // num_kv_heads
    has_alibi = alibi_slopes is not None
    grid = (num_kv_heads, num_seqs)
    _paged_attention_kernel[grid](
        out, query, key_cache, value_cache, block_tables, seq_lens, alibi_slopes if has_alibi else query,
        float(scale), query.stride(0), key_cache.stride(0), key_cache.stride(1), block_tables.shape[1], num_heads,
        HAS_ALIBI=has_alibi, GROUP=group, BLOCK_G=triton.next_power_of_2(group), HEAD=head_size,
        BLOCK_D=triton.next_power_of_2(head_size), BS=block_size, X=key_cache.shape[-1],
    )
