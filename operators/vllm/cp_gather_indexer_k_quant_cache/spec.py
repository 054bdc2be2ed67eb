"""Gather the fp8-quantised indexer keys of DeepSeek V3.2's sparse-attention indexer,
and their scales, from a paged cache into contiguous buffers: vLLM's
`cp_gather_indexer_k_quant_cache` custom op (vLLM 0.13).

    cp_gather_indexer_k_quant_cache(kv_cache, dst_k, dst_scale, block_table, cu_seq_lens) -> None

Cache layout. `kv_cache` is uint8 [num_blocks, block_size, head_dim + 4 * head_dim // 128],
contiguous, but a block's bytes are not organised per entry: the first
block_size * head_dim bytes of block n hold the fp8 keys of its block_size slots (slot j
at bytes j * head_dim ... (j + 1) * head_dim - 1 of the block), and the remaining
block_size * 4 * (head_dim // 128) bytes hold the float32 scales, one per group of 128
key elements (slot j's scales at bytes block_size * head_dim + j * 4 * (head_dim // 128)
onwards). The gather copies bytes and converts nothing.

Gather. Sequence b contributes n_b = cu_seq_lens[b + 1] - cu_seq_lens[b] tokens; its i-th
token lives in block block_table[b, i // block_size], slot i % block_size. For output row
t = cu_seq_lens[b] + i:

    dst_k[t, :]     <- the head_dim key bytes of that slot
    dst_scale[t, :] <- the 4 * (head_dim // 128) scale bytes of that slot

- `dst_k`: contiguous uint8 [num_tokens, head_dim]: the fp8 key bytes as they are (vLLM
  passes a float8_e4m3fn tensor of the same bytes); num_tokens = cu_seq_lens[batch].
  Written entirely.
- `dst_scale`: contiguous uint8 [num_tokens, 4 * (head_dim // 128)]: the float32 scales'
  bytes. Written entirely.
- `block_table`: int32 [batch, max_blocks_per_seq], contiguous.
- `cu_seq_lens`: int32 [batch + 1], cumulative token counts from 0.
- head_dim is a multiple of 128 (128 in DeepSeek V3.2; quantisation groups are 128
  elements).
Inputs other than dst_k and dst_scale are not modified. The copies must be done by
Triton kernels: PyTorch's copy_, clone and indexing ops are not allowed. Checked: both
outputs bit for bit.
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import compare_caches, gathered_positions, random_cache, sequences

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def cp_gather_indexer_k_quant_cache(
    kv_cache: torch.Tensor,
    dst_k: torch.Tensor,
    dst_scale: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
) -> None:
    """vllm::_C_cache_ops::cp_gather_indexer_k_quant_cache(Tensor kv_cache, Tensor! dst_k,
    Tensor! dst_scale, Tensor block_table, Tensor cu_seq_lens) -> ()"""
'''

OUTPUT_ARGS = ("dst_k", "dst_scale")
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone")


def _case(name, tag, seq_lens, block_size, head_dim=128, seed=0):
    return Case(name, tag, dict(seq_lens=seq_lens, block_size=block_size, head_dim=head_dim), seed=seed)


CASES = [
    _case("smoke-three-seqs", "smoke", [5, 17, 1], 8),
    _case("smoke-hd256", "smoke", [9, 3], 4, head_dim=256, seed=1),
    _case("deepseek-v32-prefill", "check", [300, 77, 1, 129], 64),
    _case("deepseek-v32-many-seqs", "check", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], 64),
    _case("bs16-long", "check", [700, 65], 16),
    _case("one-token", "check", [1], 64),
    _case("hd512", "check", [40, 23], 32, head_dim=512),
    _case("deepseek-v32-long-context-bench", "bench", [16384, 8192, 4096], 64),
    _case("deepseek-v32-batch-bench", "bench", [2048] * 16, 64),
]


def _scale_bytes(head_dim: int) -> int:
    return 4 * (head_dim // 128)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    lens, bs, d = p["seq_lens"], p["block_size"], p["head_dim"]
    num_blocks = sum(-(-n // bs) for n in lens) + 3
    table, cu = sequences(lens, bs, num_blocks, gen)
    # random bytes: keys and scales alike (the op never interprets them)
    kv_cache = random_cache((num_blocks, bs, d + _scale_bytes(d)), torch.uint8, gen).to(device)
    tokens = int(cu[-1])
    return dict(kv_cache=kv_cache,
                dst_k=torch.empty(tokens, d, dtype=torch.uint8, device=device),
                dst_scale=torch.empty(tokens, _scale_bytes(d), dtype=torch.uint8, device=device),
                block_table=table.to(device), cu_seq_lens=cu.to(device))


def reference(kv_cache, dst_k, dst_scale, block_table, cu_seq_lens):
    bs = kv_cache.shape[1]
    d, s = dst_k.shape[1], dst_scale.shape[1]
    blocks, slots = gathered_positions(block_table, cu_seq_lens, bs, None)
    flat = kv_cache.reshape(kv_cache.shape[0], -1)  # a block's bytes
    keys = slots[:, None] * d + torch.arange(d, device=flat.device)
    scales = bs * d + slots[:, None] * s + torch.arange(s, device=flat.device)
    dst_k.copy_(flat[blocks[:, None], keys])
    dst_scale.copy_(flat[blocks[:, None], scales])


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, torch.float32, quantised=False)
