"""Decode attention over a paged KV cache, as paged_attention_v1 and v2 compute it: the
query heads that share a KV head read each cache block once, with an online softmax over
a run of the sequence's blocks (all of them for v1, one 512-token partition for v2)."""

import triton
import triton.language as tl


@triton.jit
def _head_tile(kvh, GROUP: tl.constexpr, BLOCK_G: tl.constexpr, HEAD: tl.constexpr, BLOCK_D: tl.constexpr):
    """KV head kvh's query heads and the elements of a head, with their masks."""
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, BLOCK_D)
    return kvh * GROUP + g, g < GROUP, d, d < HEAD


@triton.jit
def _attend(
    q_ptr, k_ptr, v_ptr, tables_ptr, alibi_ptr, scale, seq, kvh, length, first, last,
    q_seq_stride, kv_block_stride, kv_head_stride, max_blocks,
    HAS_ALIBI: tl.constexpr, GROUP: tl.constexpr, BLOCK_G: tl.constexpr, HEAD: tl.constexpr,
    BLOCK_D: tl.constexpr, BS: tl.constexpr, X: tl.constexpr,
):
    """Blocks first .. last - 1 of sequence seq (length tokens) for KV head kvh's query
    heads, float32 throughout: the running max [G], the exp sum [G] and the unnormalised
    output [G, D]."""
    heads, g_ok, d, d_ok = _head_tile(kvh, GROUP, BLOCK_G, HEAD, BLOCK_D)
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
    for blk in range(first, last):
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
    return m, total, acc
