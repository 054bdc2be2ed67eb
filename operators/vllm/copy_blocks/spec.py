"""Copy whole blocks of a paged KV cache onto other blocks, in every layer's key and value
caches (copy-on-write when sequences that shared a block diverge, e.g. in beam search):
vLLM's `copy_blocks` custom op (vLLM 0.13).

    copy_blocks(key_caches, value_caches, block_mapping) -> None

For every layer l and every row (src, dst) of block_mapping:

    key_caches[l][dst]   <- key_caches[l][src]
    value_caches[l][dst] <- value_caches[l][src]

copying every element of the block bit for bit; nothing else changes.

- `key_caches`, `value_caches`: Python lists with one tensor per layer (the same number
  of each), contiguous, all of one dtype (float16, bfloat16, float32 or uint8 for fp8
  caches) and one shape [num_blocks, ...]: a block is the num_blocks-th part of the
  tensor, e.g. [num_heads, head_size // x, block_size, x] for keys and [num_heads,
  head_size, block_size] for values in vLLM's paged-attention layout. Updated in place.
- `block_mapping`: int64 [num_pairs, 2] on the caches' device, rows (src, dst). The dst
  blocks are distinct and no dst block is also a src block, so the copies may run in any
  order. Not modified.

The copies must be done by Triton kernels: PyTorch's copy_, clone and indexing ops are
not allowed. Checked: every cache after the call, bit for bit.
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import block_mapping, compare_caches, copy_blocks_, random_cache

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

# Updated in place: the judge wants them back from the process that timed the call.
INOUT_ARGS = ("key_caches", "value_caches")

SIGNATURES = '''
def copy_blocks(key_caches: list[torch.Tensor], value_caches: list[torch.Tensor], block_mapping: torch.Tensor) -> None:
    """vllm::_C_cache_ops::copy_blocks(Tensor(a!)[] key_caches, Tensor[](b!) value_caches,
    Tensor block_mapping) -> ()"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone")


def _case(name, tag, layers, num_blocks, heads, head_size, block_size, dtype, pairs, seed=0):
    params = dict(layers=layers, num_blocks=num_blocks, heads=heads, head_size=head_size,
                  block_size=block_size, dtype=dtype, pairs=pairs)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f16", "smoke", 2, 6, 2, 32, 16, "float16", 3),
    _case("smoke-fp8-bytes", "smoke", 3, 5, 1, 64, 8, "uint8", 2, seed=1),
    _case("llama3-8b-beam", "check", 4, 64, 8, 128, 16, "bfloat16", 17),
    _case("qwen2-7b-f32", "check", 2, 32, 4, 128, 16, "float32", 9),
    _case("llama3-70b-fp8", "check", 3, 48, 8, 128, 16, "uint8", 23),
    _case("one-pair", "check", 5, 8, 8, 64, 32, "float16", 1),
    _case("llama3-8b-32-layers-bench", "bench", 32, 512, 8, 128, 16, "bfloat16", 128),
    _case("llama3-70b-80-layers-bench", "bench", 80, 256, 8, 128, 16, "bfloat16", 64),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    nb, h, d, bs = p["num_blocks"], p["heads"], p["head_size"], p["block_size"]
    x = 16 // torch.empty(0, dtype=dtype).element_size()
    keys = [random_cache((nb, h, d // x, bs, x), dtype, gen).to(device) for _ in range(p["layers"])]
    values = [random_cache((nb, h, d, bs), dtype, gen).to(device) for _ in range(p["layers"])]
    mapping = block_mapping(p["pairs"], nb, gen).to(device)
    return dict(key_caches=keys, value_caches=values, block_mapping=mapping)


def reference(key_caches, value_caches, block_mapping):
    copy_blocks_(key_caches, block_mapping)
    copy_blocks_(value_caches, block_mapping)
    # The op returns nothing. The judge compares written tensor arguments, not lists of
    # them, so the reference returns the updated caches and `compare` checks the lists
    # the candidate was given against them.
    return key_caches, value_caches


def compare(actual, expected, case, inputs):
    keys, values = expected["return"]
    return compare_caches(
        {"key_caches": inputs["key_caches"], "value_caches": inputs["value_caches"]},
        {"key_caches": keys, "value_caches": values},
        torch.float32 if case.params["dtype"] == "uint8" else getattr(torch, case.params["dtype"]),
        quantised=False,
    )
