"""The own part of vllm::paged_attention_v2's solution (see kgb/vllm/generate.py).
"""

import triton
import triton.language as tl

from kgb.vllm.kernels.paged_attention import _attend, _head_tile

PARTITION = 512  # tokens per partition, fixed by the op


@triton.jit
def _partition_kernel(
    tmp_ptr, sums_ptr, maxes_ptr, q_ptr, k_ptr, v_ptr, tables_ptr, lens_ptr, alibi_ptr, scale,
    q_seq_stride, kv_block_stride, kv_head_stride, max_blocks, num_heads, max_parts,
    HAS_ALIBI: tl.constexpr, GROUP: tl.constexpr, BLOCK_G: tl.constexpr, HEAD: tl.constexpr,
    BLOCK_D: tl.constexpr, BS: tl.constexpr, X: tl.constexpr, PART: tl.constexpr,
):
    # One program per (KV head, sequence, partition): the query heads of the group attend
    # to the partition's tokens with an online softmax; the partial result goes to the
    # workspace, normalised by its own exp sum.
    kvh = tl.program_id(0)
    seq = tl.program_id(1)
    part = tl.program_id(2)
    length = tl.load(lens_ptr + seq)
    if part * PART < length:
        first = part * (PART // BS)
        last = tl.minimum(first + PART // BS, tl.cdiv(length, BS))
        m, total, acc = _attend(
            q_ptr, k_ptr, v_ptr, tables_ptr, alibi_ptr, scale, seq, kvh, length, first, last,
            q_seq_stride, kv_block_stride, kv_head_stride, max_blocks, HAS_ALIBI, GROUP, BLOCK_G,
            HEAD, BLOCK_D, BS, X,
        )
        heads, g_ok, d, d_ok = _head_tile(kvh, GROUP, BLOCK_G, HEAD, BLOCK_D)
        row = (seq.to(tl.int64) * num_heads + heads) * max_parts + part  # [G]
        tl.store(maxes_ptr + row, m, mask=g_ok)
        tl.store(sums_ptr + row, total, mask=g_ok)
        res = acc / (total + 1e-6)[:, None]
        tl.store(tmp_ptr + row[:, None] * HEAD + d[None, :], res.to(tmp_ptr.dtype.element_ty),
                 mask=g_ok[:, None] & d_ok[None, :])


@triton.jit
def _reduce_kernel(out_ptr, tmp_ptr, sums_ptr, maxes_ptr, lens_ptr, num_heads, max_parts,
                   HEAD: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_P: tl.constexpr, PART: tl.constexpr):
    head = tl.program_id(0)
    seq = tl.program_id(1)
    length = tl.load(lens_ptr + seq)
    n_parts = tl.cdiv(length, PART)
    p = tl.arange(0, BLOCK_P)
    p_ok = p < n_parts
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD
    row = (seq.to(tl.int64) * num_heads + head) * max_parts
    maxes = tl.load(maxes_ptr + row + p, mask=p_ok, other=-float("inf"))
    sums = tl.load(sums_ptr + row + p, mask=p_ok, other=0.0)
    w = sums * tl.exp(maxes - tl.max(maxes, axis=0))
    w = tl.where(p_ok, w, 0.0)
    parts = tl.load(tmp_ptr + (row + p)[:, None] * HEAD + d[None, :], mask=p_ok[:, None] & d_ok[None, :],
                    other=0.0).to(tl.float32)
    res = tl.sum(parts * w[:, None], axis=0) / (tl.sum(w, axis=0) + 1e-6)
    first = tl.sum(tl.where((p == 0)[:, None], parts, 0.0), axis=0)
    res = tl.where(n_parts == 1, first, res)  # one partition: its result is copied as is
    tl.store(out_ptr + (seq.to(tl.int64) * num_heads + head) * HEAD + d, res.to(out_ptr.dtype.element_ty),
             mask=d_ok)


def paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads, scale,
                       block_tables, seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale,
                       v_scale, tp_rank=0, blocksparse_local_blocks=0, blocksparse_vert_stride=0,
                       blocksparse_block_size=64, blocksparse_head_sliding_step=0):
    num_seqs, num_heads, head_size = query.shape
    group = num_heads // num_kv_heads
    max_parts = exp_sums.shape[-1]
    has_alibi = alibi_slopes is not None
    block_d = triton.next_power_of_2(head_size)
    _partition_kernel[(num_kv_heads, num_seqs, max_parts)](
        tmp_out, exp_sums, max_logits, query, key_cache, value_cache, block_tables, seq_lens,
        alibi_slopes if has_alibi else query, float(scale), query.stride(0), key_cache.stride(0),
        key_cache.stride(1), block_tables.shape[1], num_heads, max_parts,
        HAS_ALIBI=has_alibi, GROUP=group, BLOCK_G=triton.next_power_of_2(group), HEAD=head_size,
        BLOCK_D=block_d, BS=block_size, X=key_cache.shape[-1], PART=PARTITION,
    )
    _reduce_kernel[(num_heads, num_seqs)](
        out, tmp_out, exp_sums, max_logits, seq_lens, num_heads, max_parts, HEAD=head_size, BLOCK_D=block_d,
        BLOCK_P=triton.next_power_of_2(max_parts), PART=PARTITION,
    )
