"""Decode attention over a paged KV cache: vLLM's `paged_attention_v1` custom op (vLLM 0.13).
Every sequence of a decode batch has one new query token per head; its keys and values
live in fixed-size blocks scattered over a shared cache, found through a block table.

    paged_attention_v1(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                       seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype,
                       k_scale, v_scale, tp_rank=0, blocksparse_local_blocks=0,
                       blocksparse_vert_stride=0, blocksparse_block_size=64,
                       blocksparse_head_sliding_step=0) -> None

Cache layout (x = 16 bytes / element size: 8 for float16 and bfloat16, 4 for float32):
- key_cache   [num_blocks, num_kv_heads, head_size // x, block_size, x]: element d of the
  key in slot t of physical block b is key_cache[b, h, d // x, t, d % x];
- value_cache [num_blocks, num_kv_heads, head_size, block_size]: element d of the value in
  slot t of block b is value_cache[b, h, d, t].
Token j (0-based) of sequence s is in physical block block_tables[s, j // block_size], slot
j % block_size. Entries of block_tables past a sequence's last block are arbitrary.

For sequence s (L = seq_lens[s] tokens, L >= 1) and query head h, whose KV head is
h // (num_heads / num_kv_heads) (grouped-query attention):

    logit_j = scale * dot(query[s, h], key_j)   (float32)  + alibi_slopes[h] * (j - L + 1)
    m = max_j logit_j;  e_j = exp(logit_j - m);  S = sum_j e_j
    p_j = e_j / (S + 1e-6), rounded to the query's dtype
    out[s, h] = sum_j p_j * value_j              (float32 accumulation, rounded to the dtype)

over j = 0 .. L - 1 (the ALiBi term only when alibi_slopes is given). The rounding of p_j
and the 1e-6 follow vLLM's kernel. Tolerance: the published rtol of the dtype and an atol
of max(published, 4 x unit roundoff of the dtype x RMS of the expected output), which an
implementation that keeps p in float32 also meets.

Arguments:
- `out`: [num_seqs, num_heads, head_size], contiguous, the query's dtype; written (its
  previous contents are garbage). Nothing is returned.
- `query`: float16, bfloat16 or float32, [num_seqs, num_heads, head_size]; the elements of
  a head are contiguous and heads are head_size apart, but sequences are query.stride(0)
  apart (the query may be a slice of a fused qkv tensor).
- `key_cache`, `value_cache`: as above, the query's dtype, contiguous.
- `num_kv_heads`: divides num_heads. `scale`: a Python float (1 / sqrt(head_size)).
- `block_tables`: int32 [num_seqs, max_num_blocks_per_seq]; `seq_lens`: int32 [num_seqs].
- `block_size`: 8, 16 or 32; head_size is one of 32, 64, 80, 96, 112, 120, 128, 192, 256.
- `max_seq_len`: the largest value of seq_lens.
- `alibi_slopes`: None or float32 [num_heads].
- `kv_cache_dtype`: always "auto" here (the cache holds the query's dtype); `k_scale`,
  `v_scale`: float32 [1] tensors equal to 1.0, unused with "auto".
- `tp_rank` and the blocksparse_* arguments: always their defaults here (dense attention).
None of the inputs may be modified.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case
from kgb.vllm.attention import (
    PagedShape,
    compare_attention,
    make_paged_inputs,
    paged_attention,
    paged_case,
    weighted_magnitude,
)

VERSION = 3  # 3: each case's sequence lengths are the same in every draw

SIGNATURES = '''
def paged_attention_v1(
    out: torch.Tensor,
    query: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    num_kv_heads: int,
    scale: float,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    block_size: int,
    max_seq_len: int,
    alibi_slopes: torch.Tensor | None,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    v_scale: torch.Tensor,
    tp_rank: int = 0,
    blocksparse_local_blocks: int = 0,
    blocksparse_vert_stride: int = 0,
    blocksparse_block_size: int = 64,
    blocksparse_head_sliding_step: int = 0,
) -> None:
    """vllm::paged_attention_v1(Tensor! out, Tensor query, Tensor key_cache, Tensor value_cache,
    int num_kv_heads, float scale, Tensor block_tables, Tensor seq_lens, int block_size,
    int max_seq_len, Tensor? alibi_slopes, str kv_cache_dtype, Tensor k_scale, Tensor v_scale,
    int tp_rank, int blocksparse_local_blocks, int blocksparse_vert_stride,
    int blocksparse_block_size, int blocksparse_head_sliding_step) -> ()"""
'''

OUTPUT_ARGS = ("out",)


CASES = [
    paged_case("smoke-gqa-f32", "smoke", PagedShape(2, 4, 2, 32, 16, 37, "float32")),
    paged_case("smoke-alibi-bf16", "smoke", PagedShape(2, 2, 2, 64, 8, 20, "bfloat16", alibi=True), seed=1),
    paged_case("llama3-8b-f16", "check", PagedShape(7, 32, 8, 128, 16, 1000, "float16")),
    paged_case("llama3-8b-bf16-fused-q", "check", PagedShape(5, 32, 8, 128, 16, 777, "bfloat16", fused_q=True)),
    paged_case("llama3-70b-tp8-bf16", "check", PagedShape(9, 8, 1, 128, 16, 2049, "bfloat16")),
    paged_case("qwen2-7b-bs32-bf16", "check", PagedShape(4, 28, 4, 128, 32, 1500, "bfloat16")),
    paged_case("mpt-alibi-f16", "check", PagedShape(3, 32, 32, 128, 16, 600, "float16", alibi=True)),
    paged_case("phi2-hd80-f16", "check", PagedShape(4, 32, 32, 80, 16, 333, "float16")),
    paged_case("gemma-hd256-bs8-bf16", "check", PagedShape(3, 8, 1, 256, 8, 500, "bfloat16")),
    paged_case("hd96-f32", "check", PagedShape(3, 12, 4, 96, 16, 200, "float32")),
    paged_case("one-token-f16", "check", PagedShape(2, 16, 16, 64, 16, 1, "float16")),
    paged_case("llama3-8b-decode-bf16", "bench", PagedShape(64, 32, 8, 128, 16, 2048, "bfloat16")),
    paged_case("llama3-70b-tp8-decode-f16", "bench", PagedShape(128, 8, 1, 128, 16, 4096, "float16")),
    paged_case("qwen2-7b-decode-bf16", "bench", PagedShape(32, 28, 4, 128, 32, 4096, "bfloat16")),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    shape = case.params["shape"]
    inputs = make_paged_inputs(shape, gen, device)
    q = inputs["query"]
    return dict(out=torch.empty(q.shape, dtype=q.dtype, device=device), **inputs)


def reference(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, block_size,
              max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0, blocksparse_local_blocks=0,
              blocksparse_vert_stride=0, blocksparse_block_size=64, blocksparse_head_sliding_step=0):
    partials = paged_attention(query, key_cache, value_cache, scale, block_tables, seq_lens, block_size, alibi_slopes)
    out.copy_(partials.out[:, :, 0])


def compare(actual, expected, case, inputs):
    return compare_attention(actual["out"], expected["out"], case.reduction, "out", weighted_magnitude(inputs)[:, :, 0])
