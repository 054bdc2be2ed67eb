"""The own part of vllm::paged_attention_v1's solution (see kgb/vllm/generate.py).
"""

import triton
import triton.language as tl

from kgb.vllm.kernels.paged_attention import _attend, _head_tile


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
    m, total, acc = _attend(
        q_ptr, k_ptr, v_ptr, tables_ptr, alibi_ptr, scale, seq, kvh, length, 0, tl.cdiv(length, BS),
        q_seq_stride, kv_block_stride, kv_head_stride, max_blocks, HAS_ALIBI, GROUP, BLOCK_G, HEAD,
        BLOCK_D, BS, X,
    )
    heads, g_ok, d, d_ok = _head_tile(kvh, GROUP, BLOCK_G, HEAD, BLOCK_D)
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
