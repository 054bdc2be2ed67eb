"""Copy whole blocks of every layer's MLA (multi-head latent attention, DeepSeek V2/V3)
paged cache onto other blocks: vLLM's `copy_blocks_mla` custom op (vLLM 0.13).

    copy_blocks_mla(kv_caches, block_mapping) -> None

For every layer l and every row (src, dst) of block_mapping:

    kv_caches[l][dst] <- kv_caches[l][src]

copying the kv_caches[l].stride(0) elements of the block bit for bit; nothing else changes.

- `kv_caches`: a Python list with one tensor per layer, contiguous, all of one dtype
  (float16, bfloat16, float32, or uint8 for fp8 caches) and one shape [num_blocks,
  block_size, entry_size] (entry_size = kv_lora_rank + rope dim, 576 for DeepSeek V3).
  Updated in place.
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
INOUT_ARGS = ("kv_caches",)

SIGNATURES = '''
def copy_blocks_mla(kv_caches: list[torch.Tensor], block_mapping: torch.Tensor) -> None:
    """vllm::_C_cache_ops::copy_blocks_mla(Tensor(a!)[] kv_caches, Tensor block_mapping) -> ()"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone")


def _case(name, tag, layers, num_blocks, block_size, entry, dtype, pairs, seed=0):
    params = dict(layers=layers, num_blocks=num_blocks, block_size=block_size, entry=entry,
                  dtype=dtype, pairs=pairs)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-bf16", "smoke", 2, 6, 16, 80, "bfloat16", 3),
    _case("smoke-fp8-bytes", "smoke", 3, 5, 8, 144, "uint8", 2, seed=1),
    _case("deepseek-v3-bs64", "check", 3, 32, 64, 576, "bfloat16", 11),
    _case("deepseek-v2-lite-bs16-f16", "check", 4, 48, 16, 576, "float16", 20),
    _case("deepseek-v3-fp8", "check", 2, 24, 64, 576, "uint8", 7),
    _case("f32-one-pair", "check", 2, 8, 16, 576, "float32", 1),
    _case("deepseek-v3-61-layers-bench", "bench", 61, 256, 64, 576, "bfloat16", 64),
    _case("deepseek-v2-lite-27-layers-bench", "bench", 27, 1024, 16, 576, "bfloat16", 256),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = (p["num_blocks"], p["block_size"], p["entry"])
    caches = [random_cache(shape, dtype, gen).to(device) for _ in range(p["layers"])]
    return dict(kv_caches=caches, block_mapping=block_mapping(p["pairs"], p["num_blocks"], gen).to(device))


def reference(kv_caches, block_mapping):
    copy_blocks_(kv_caches, block_mapping)
    # The op returns nothing. The judge compares written tensor arguments, not lists of
    # them, so the reference returns the updated caches and `compare` checks the list the
    # candidate was given against them.
    return kv_caches


def compare(actual, expected, case, inputs):
    dtype = getattr(torch, case.params["dtype"])
    return compare_caches({"kv_caches": inputs["kv_caches"]}, {"kv_caches": expected["return"]},
                          dtype if dtype.is_floating_point else torch.float32, quantised=False)
