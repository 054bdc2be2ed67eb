"""Gather the cached entries of a batch of sequences from a paged cache into one
contiguous buffer (MLA's context-parallel / chunked-prefill path reads a sequence's
earlier context this way): vLLM's `cp_gather_cache` custom op (vLLM 0.13).

    cp_gather_cache(src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts=None) -> None

Sequence b (b < batch_size) contributes n_b = cu_seq_lens[b + 1] - cu_seq_lens[b] tokens.
Its i-th gathered token (i < n_b) is its token at position p = i + seq_starts[b] (p = i
when seq_starts is None), which lives in block block_table[b, p // block_size], slot
p % block_size:

    dst[cu_seq_lens[b] + i, ...] <- src_cache[block_table[b, p // block_size], p % block_size, ...]

an exact copy of the whole entry.

- `src_cache`: [num_blocks, block_size, ENTRY...] (ENTRY is one or more dimensions, e.g.
  576 = kv_lora_rank + rope dim for DeepSeek MLA, or [num_heads, head_size]); any dtype
  of 1, 2 or 4 bytes (bfloat16, float16, float32, uint8 for fp8 caches). The elements of
  one entry are contiguous; blocks are src_cache.stride(0) and entries src_cache.stride(1)
  apart.
- `dst`: [cu_seq_lens[batch_size], ENTRY...], same dtype, each row contiguous, rows
  dst.stride(0) apart; written entirely.
- `block_table`: int32 [batch_size, max_blocks_per_seq]; rows block_table.stride(0) apart.
- `cu_seq_lens`: int32 [batch_size + 1], cumulative token counts starting at 0.
- `batch_size`: a Python int.
- `seq_starts`: None or int32 [batch_size]: the position of each sequence's first
  gathered token.
Inputs other than dst are not modified; no value is converted. The copies must be done
by Triton kernels: PyTorch's copy_, clone and indexing ops are not allowed.
Checked: dst bit for bit.
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import compare_caches, gathered_positions, random_cache, sequences

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def cp_gather_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """vllm::_C_cache_ops::cp_gather_cache(Tensor src_cache, Tensor! dst, Tensor block_table,
    Tensor cu_seq_lens, int batch_size, Tensor? seq_starts) -> ()"""
'''

OUTPUT_ARGS = ("dst",)
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone")


def _case(name, tag, seq_lens, block_size, entry, dtype, starts=None, num_blocks=None, seed=0):
    params = dict(seq_lens=seq_lens, block_size=block_size, entry=entry, dtype=dtype, starts=starts,
                  num_blocks=num_blocks)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-bf16-mla", "smoke", [5, 17, 1], 8, (80,), "bfloat16"),
    _case("smoke-f16-heads-starts", "smoke", [9, 3], 4, (2, 16), "float16", starts=[3, 6], seed=1),
    _case("deepseek-v3-chunk", "check", [300, 77, 1, 129], 64, (576,), "bfloat16"),
    _case("deepseek-v3-chunk-starts", "check", [128, 200, 64], 64, (576,), "bfloat16",
          starts=[256, 61, 0]),
    _case("deepseek-v2-lite-bs16-f16", "check", [33, 65, 17, 2, 90], 16, (576,), "float16"),
    _case("fp8-ds-mla-bytes", "check", [70, 31], 64, (656,), "uint8", starts=[5, 64]),
    _case("f32-heads", "check", [19, 40], 16, (4, 64), "float32", starts=[0, 33]),
    _case("many-seqs", "check", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], 16, (576,),
          "bfloat16"),
    _case("deepseek-v3-long-context-bench", "bench", [8192, 4096, 2048, 2048], 64, (576,), "bfloat16"),
    _case("deepseek-v3-many-seqs-bench", "bench", [512] * 64, 64, (576,), "bfloat16",
          starts=[128] * 64),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    lens, bs = p["seq_lens"], p["block_size"]
    starts = p["starts"]
    need = sum(-(-((starts[b] if starts else 0) + n) // bs) for b, n in enumerate(lens))
    num_blocks = p["num_blocks"] or need + 3
    table, cu = sequences(lens, bs, num_blocks, gen, starts)
    src = random_cache((num_blocks, bs, *p["entry"]), dtype, gen).to(device)
    dst = torch.empty((int(cu[-1]), *p["entry"]), dtype=dtype, device=device)
    return dict(src_cache=src, dst=dst, block_table=table.to(device), cu_seq_lens=cu.to(device),
                batch_size=len(lens),
                seq_starts=torch.tensor(starts, dtype=torch.int32, device=device) if starts else None)


def reference(src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts=None):
    blocks, slots = gathered_positions(block_table[:batch_size], cu_seq_lens[:batch_size + 1],
                                       src_cache.shape[1], seq_starts)
    dst[:blocks.numel()] = src_cache[blocks, slots]


def compare(actual, expected, case, inputs):
    dtype = getattr(torch, case.params["dtype"])
    return compare_caches(actual, expected, dtype if dtype.is_floating_point else torch.float32,
                          quantised=False)
