"""Gather the cached MLA entries of a batch of sequences from a paged cache into one
contiguous buffer, dequantising an fp8 cache on the way: vLLM's
`gather_and_maybe_dequant_cache` custom op (vLLM 0.13), used by MLA prefill to read a
request's cached context.

    gather_and_maybe_dequant_cache(src_cache, dst, block_table, cu_seq_lens, token_to_seq,
                                   num_tokens, kv_cache_dtype, scale, seq_starts=None) -> None

For every output token t < num_tokens: its sequence is b = token_to_seq[t], its index
within the sequence is i = t - cu_seq_lens[b], and it reads the sequence's position
p = i + seq_starts[b] (p = i when seq_starts is None), which lives in block
block_table[b, p // block_size], slot p % block_size:

    dst[t, :] <- L(src_cache[block_table[b, p // block_size], p % block_size, :])

- `src_cache`: [num_blocks, block_size, 576] (576 = DeepSeek's kv_lora_rank 512 + rope
  dim 64, the only entry size vLLM supports here); entries contiguous, blocks
  src_cache.stride(0) and entries src_cache.stride(1) apart.
- `dst`: float16, bfloat16 or float32 [>= num_tokens, 576], rows contiguous and
  dst.stride(0) apart; rows t < num_tokens are written, later rows left alone.
- `block_table`: int32 [batch, max_blocks_per_seq], rows block_table.stride(0) apart.
- `cu_seq_lens`: int32 [batch + 1], cumulative token counts from 0, cu_seq_lens[batch] =
  num_tokens.
- `token_to_seq`: int32 [>= num_tokens]: the sequence of each output token (consistent
  with cu_seq_lens).
- `num_tokens`: a Python int.
- `kv_cache_dtype`: "auto": src_cache has dst's dtype and L copies entries unchanged.
  "fp8" or "fp8_e4m3": src_cache is uint8 holding float8_e4m3fn bit patterns and
  L(v) = round_to_dtype(float32(fp8 value of v) * scale), the product in float32 rounded
  once to nearest even.
- `scale`: float32 tensor of one element (read only for fp8).
- `seq_starts`: None or int32 [batch]: the position of each sequence's first token.

Inputs other than dst are not modified. Checked: dst (all rows); a copy must be exact,
dequantised values within the dtype's rtol (exact when computed as stated).
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import (
    cache_scale,
    compare_caches,
    gathered_positions,
    loaded,
    random_cache,
    sequences,
)

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def gather_and_maybe_dequant_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    token_to_seq: torch.Tensor,
    num_tokens: int,
    kv_cache_dtype: str,
    scale: torch.Tensor,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """vllm::_C_cache_ops::gather_and_maybe_dequant_cache(Tensor src_cache, Tensor! dst,
    Tensor block_table, Tensor cu_seq_lens, Tensor token_to_seq, int num_tokens,
    str kv_cache_dtype, Tensor scale, Tensor? seq_starts) -> ()"""
'''

INOUT_ARGS = ("dst",)

ENTRY = 576


def _case(name, tag, seq_lens, block_size, dtype, cache="auto", starts=None, extra_rows=0, seed=0):
    params = dict(seq_lens=seq_lens, block_size=block_size, dtype=dtype, cache=cache, starts=starts,
                  extra_rows=extra_rows)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-bf16", "smoke", [5, 11, 1], 8, "bfloat16", extra_rows=3),
    _case("smoke-f16-fp8-starts", "smoke", [6, 4], 4, "float16", cache="fp8", starts=[3, 9], seed=1),
    _case("deepseek-v3-prefill", "check", [300, 77, 1, 129], 64, "bfloat16"),
    _case("deepseek-v3-fp8-starts", "check", [128, 200, 64], 64, "bfloat16", cache="fp8",
          starts=[256, 61, 0], extra_rows=10),
    _case("deepseek-v2-lite-bs16-f16", "check", [33, 65, 17, 2, 90], 16, "float16"),
    _case("f32-fp8-e4m3", "check", [70, 31], 16, "float32", cache="fp8_e4m3", starts=[5, 64]),
    _case("many-seqs-fp8", "check", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], 16,
          "bfloat16", cache="fp8"),
    _case("deepseek-v3-long-context-bench", "bench", [8192, 4096, 2048, 2048], 64, "bfloat16"),
    _case("deepseek-v3-fp8-bench", "bench", [1024] * 16, 64, "bfloat16", cache="fp8",
          starts=[512] * 16),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    lens, bs, starts = p["seq_lens"], p["block_size"], p["starts"]
    need = sum(-(-((starts[b] if starts else 0) + n) // bs) for b, n in enumerate(lens))
    table, cu = sequences(lens, bs, need + 3, gen, starts)
    cache_dtype = torch.uint8 if p["cache"] != "auto" else dtype
    src = random_cache((need + 3, bs, ENTRY), cache_dtype, gen).to(device)
    tokens = int(cu[-1])
    dst = random_cache((tokens + p["extra_rows"], ENTRY), dtype, gen).to(device)
    token_to_seq = torch.repeat_interleave(torch.arange(len(lens), dtype=torch.int32), torch.tensor(lens))
    return dict(src_cache=src, dst=dst, block_table=table.to(device), cu_seq_lens=cu.to(device),
                token_to_seq=token_to_seq.to(device), num_tokens=tokens, kv_cache_dtype=p["cache"],
                scale=cache_scale(0.03, device),
                seq_starts=torch.tensor(starts, dtype=torch.int32, device=device) if starts else None)


def reference(src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens, kv_cache_dtype, scale,
              seq_starts=None):
    blocks, slots = gathered_positions(block_table, cu_seq_lens, src_cache.shape[1], seq_starts)
    dst[:num_tokens] = loaded(src_cache[blocks, slots][:num_tokens], kv_cache_dtype, scale, dst.dtype)


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, getattr(torch, case.params["dtype"]))
