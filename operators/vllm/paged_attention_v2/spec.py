"""Decode attention over a paged KV cache, split over partitions of 512 tokens: vLLM's
`paged_attention_v2` custom op (vLLM 0.13). It computes what paged_attention_v1 computes,
but each sequence's tokens are processed in partitions of PARTITION_SIZE = 512 tokens
(so that long sequences spread over many thread blocks), each partition leaving its
partial result in caller-provided workspace, which a second pass reduces into `out`.

    paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache,
                       num_kv_heads, scale, block_tables, seq_lens, block_size, max_seq_len,
                       alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0,
                       blocksparse_local_blocks=0, blocksparse_vert_stride=0,
                       blocksparse_block_size=64, blocksparse_head_sliding_step=0) -> None

Cache layout (x = 16 bytes / element size: 8 for float16 and bfloat16, 4 for float32):
- key_cache   [num_blocks, num_kv_heads, head_size // x, block_size, x]: element d of the
  key in slot t of physical block b is key_cache[b, h, d // x, t, d % x];
- value_cache [num_blocks, num_kv_heads, head_size, block_size]: element d of the value in
  slot t of block b is value_cache[b, h, d, t].
Token j (0-based) of sequence s is in physical block block_tables[s, j // block_size], slot
j % block_size. Entries of block_tables past a sequence's last block are arbitrary.

For sequence s (L = seq_lens[s] tokens, L >= 1) and query head h, whose KV head is
h // (num_heads / num_kv_heads) (grouped-query attention), partition p covers tokens
j = 512 p .. min(512 (p + 1), L) - 1 and exists when 512 p < L. With

    logit_j = scale * dot(query[s, h], key_j)   (float32)  + alibi_slopes[h] * (j - L + 1)

(the ALiBi term only when alibi_slopes is given), each existing partition p writes

    max_logits[s, h, p] = m_p = max of logit_j over the partition
    exp_sums[s, h, p]   = S_p = sum of exp(logit_j - m_p) over the partition   (float32)
    tmp_out[s, h, p]    = sum_j round(exp(logit_j - m_p) / (S_p + 1e-6)) * value_j

(the probabilities rounded to the query's dtype, float32 accumulation, the result rounded
to the dtype). Then, with P partitions: if P = 1, out[s, h] = tmp_out[s, h, 0]; otherwise,
with M = max_p m_p, w_p = S_p * exp(m_p - M) and W = sum_p w_p,

    out[s, h] = sum_p tmp_out[s, h, p] * w_p / (W + 1e-6)     (float32, rounded to the dtype)

Workspace entries of partitions that do not exist are neither written nor checked.
Tolerances: `out` and `tmp_out` within the published rtol of the dtype and an atol of
max(published, 4 x unit roundoff of the dtype x RMS of the expected values) (so keeping
the probabilities in float32 also passes); `out`'s atol also holds 2 units of roundoff of
each partition's tmp_out, weighted as the combination weights it (two right kernels' partial
results can round a unit in the last place apart); exp_sums within a relative 1e-4;
max_logits within 1e-4 x (1 + |value|).

Arguments:
- `out`: [num_seqs, num_heads, head_size], contiguous, the query's dtype; written (its
  previous contents are garbage). Nothing is returned.
- `exp_sums`, `max_logits`: float32 [num_seqs, num_heads, max_num_partitions] and
  `tmp_out`: [num_seqs, num_heads, max_num_partitions, head_size] in the query's dtype,
  all contiguous, max_num_partitions = cdiv(max_seq_len, 512); written as above.
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
    PARTITION_SIZE,
    PagedShape,
    combine,
    compare_v2,
    make_paged_inputs,
    paged_attention,
    paged_case,
)

VERSION = 4  # 3: each case's sequence lengths are the same in every draw; 4: out's atol holds the partials' rounding

SIGNATURES = '''
def paged_attention_v2(
    out: torch.Tensor,
    exp_sums: torch.Tensor,
    max_logits: torch.Tensor,
    tmp_out: torch.Tensor,
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
    """vllm::paged_attention_v2(Tensor! out, Tensor! exp_sums, Tensor! max_logits,
    Tensor! tmp_out, Tensor query, Tensor key_cache, Tensor value_cache,
    int num_kv_heads, float scale, Tensor block_tables, Tensor seq_lens, int block_size,
    int max_seq_len, Tensor? alibi_slopes, str kv_cache_dtype, Tensor k_scale, Tensor v_scale,
    int tp_rank, int blocksparse_local_blocks, int blocksparse_vert_stride,
    int blocksparse_block_size, int blocksparse_head_sliding_step) -> ()"""
'''

OUTPUT_ARGS = ("out", "exp_sums", "max_logits", "tmp_out")


CASES = [
    paged_case("smoke-two-partitions-f32", "smoke", PagedShape(2, 2, 1, 32, 16, 600, "float32")),
    paged_case("smoke-alibi-bf16", "smoke", PagedShape(2, 2, 2, 32, 32, 520, "bfloat16", alibi=True), seed=1),
    paged_case("llama3-8b-long-f16", "check", PagedShape(3, 32, 8, 128, 16, 5000, "float16")),
    paged_case("llama3-8b-bf16-fused-q", "check", PagedShape(4, 32, 8, 128, 16, 1537, "bfloat16", fused_q=True)),
    paged_case("llama3-70b-tp8-bf16", "check", PagedShape(5, 8, 1, 128, 16, 9000, "bfloat16")),
    paged_case("qwen2-7b-bs32-bf16", "check", PagedShape(3, 28, 4, 128, 32, 3000, "bfloat16")),
    paged_case("mpt-alibi-f16", "check", PagedShape(2, 32, 32, 128, 16, 1100, "float16", alibi=True)),
    paged_case("phi2-hd80-f16", "check", PagedShape(3, 32, 32, 80, 8, 1024, "float16")),
    paged_case("gemma-hd256-bf16", "check", PagedShape(2, 8, 1, 256, 16, 2000, "bfloat16")),
    paged_case("exact-partition-f32", "check", PagedShape(3, 4, 2, 64, 16, 512, "float32")),
    paged_case("short-f16", "check", PagedShape(4, 16, 16, 64, 16, 30, "float16")),
    paged_case("llama3-8b-long-decode-bf16", "bench", PagedShape(16, 32, 8, 128, 16, 16384, "bfloat16")),
    paged_case("llama3-70b-tp8-32k-f16", "bench", PagedShape(8, 8, 1, 128, 16, 32768, "float16")),
    paged_case("qwen2-7b-8k-bf16", "bench", PagedShape(32, 28, 4, 128, 32, 8192, "bfloat16")),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    shape = case.params["shape"]
    inputs = make_paged_inputs(shape, gen, device)
    q = inputs["query"]
    seqs, heads, head_size = q.shape
    parts = -(-shape.max_len // PARTITION_SIZE)
    return dict(
        out=torch.empty(q.shape, dtype=q.dtype, device=device),
        exp_sums=torch.empty(seqs, heads, parts, dtype=torch.float32, device=device),
        max_logits=torch.empty(seqs, heads, parts, dtype=torch.float32, device=device),
        tmp_out=torch.empty(seqs, heads, parts, head_size, dtype=q.dtype, device=device),
        **inputs,
    )


def reference(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, block_size,
              max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0, blocksparse_local_blocks=0,
              blocksparse_vert_stride=0, blocksparse_block_size=64, blocksparse_head_sliding_step=0):
    partials = paged_attention(query, key_cache, value_cache, scale, block_tables, seq_lens, block_size, alibi_slopes,
                               partition_size=PARTITION_SIZE)
    parts = exp_sums.shape[-1]  # the workspace may be narrower than the block table
    exists = partials.exists[:, None, :parts]  # partitions past a sequence's end stay untouched
    max_logits.copy_(torch.where(exists, partials.max_logit[..., :parts], max_logits))
    exp_sums.copy_(torch.where(exists, partials.exp_sum[..., :parts], exp_sums))
    tmp_out.copy_(torch.where(exists[..., None], partials.out[:, :, :parts], tmp_out))
    out.copy_(combine(partials))


def compare(actual, expected, case, inputs):
    return compare_v2(actual, expected, case.reduction, inputs)
