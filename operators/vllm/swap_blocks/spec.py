"""Copy listed blocks of one KV cache into listed blocks of another (vLLM swaps blocks
between the GPU cache and a CPU cache this way when it preempts sequences): vLLM's
`swap_blocks` custom op (vLLM 0.13).

    swap_blocks(src, dst, block_mapping) -> None

For every row (s, d) of block_mapping: dst[d] <- src[s], copying the block's
src.stride(0) elements bit for bit. Nothing else in dst changes; src is not modified.

- `src`, `dst`: contiguous tensors of one dtype (float16, bfloat16, float32, or uint8 for
  fp8 caches) with the same block shape [..] after the first dimension, which may differ
  (a CPU cache is often larger or smaller than the GPU cache). In vLLM one of them may
  live in host memory; here both are on the device being evaluated.
- `block_mapping`: int64 [num_pairs, 2] in host (CPU) memory, as vLLM passes it, rows
  (s, d) with s < src.shape[0] and d < dst.shape[0]; the d are distinct. Not modified.

The copies must be done by Triton kernels: PyTorch's copy_, clone and indexing ops are
not allowed (moving block_mapping to the device with `.to` is). Checked: dst after the
call, bit for bit.
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import compare_caches, random_cache

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def swap_blocks(src: torch.Tensor, dst: torch.Tensor, block_mapping: torch.Tensor) -> None:
    """vllm::_C_cache_ops::swap_blocks(Tensor src, Tensor! dst, Tensor block_mapping) -> ()"""
'''

INOUT_ARGS = ("dst",)
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone")
ALLOWED_TORCH_OPS = ("aten::_to_copy",)


def _case(name, tag, src_blocks, dst_blocks, block_shape, dtype, pairs, seed=0):
    params = dict(src_blocks=src_blocks, dst_blocks=dst_blocks, block_shape=block_shape,
                  dtype=dtype, pairs=pairs)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f16", "smoke", 6, 9, (16, 2, 32), "float16", 4),
    _case("smoke-fp8-bytes", "smoke", 7, 4, (8, 144), "uint8", 3, seed=1),
    _case("llama3-8b-swap-out", "check", 64, 128, (16, 8, 128), "bfloat16", 24),
    _case("llama3-8b-swap-in", "check", 128, 64, (16, 8, 128), "bfloat16", 31),
    _case("paged-key-layout-f32", "check", 16, 16, (4, 16, 16, 4), "float32", 16),
    _case("mla-fp8", "check", 20, 30, (64, 576), "uint8", 9),
    _case("one-block", "check", 3, 3, (16, 8, 128), "float16", 1),
    _case("llama3-8b-swap-bench", "bench", 2048, 2048, (16, 8, 128), "bfloat16", 512),
    _case("deepseek-mla-swap-bench", "bench", 1024, 1024, (64, 576), "bfloat16", 256),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    src = random_cache((p["src_blocks"], *p["block_shape"]), dtype, gen).to(device)
    dst = random_cache((p["dst_blocks"], *p["block_shape"]), dtype, gen).to(device)
    s = torch.randint(0, p["src_blocks"], (p["pairs"],), generator=gen)
    d = torch.randperm(p["dst_blocks"], generator=gen)[:p["pairs"]]
    # on the host, as vLLM takes it (drawn on the judged device's generator like the rest)
    return dict(src=src, dst=dst, block_mapping=torch.stack([s, d], dim=1).to("cpu", torch.int64))


def reference(src, dst, block_mapping):
    mapping = block_mapping.to(src.device)
    dst[mapping[:, 1]] = src[mapping[:, 0]]


def compare(actual, expected, case, inputs):
    dtype = getattr(torch, case.params["dtype"])
    return compare_caches(actual, expected, dtype if dtype.is_floating_point else torch.float32,
                          quantised=False)
