"""Convert a whole KV cache between a model dtype and fp8 (float8_e4m3fn bytes), in either
direction: vLLM's `convert_fp8` custom op (vLLM 0.13).

    convert_fp8(dst_cache, src_cache, scale, kv_cache_dtype) -> None

`src_cache` and `dst_cache` are contiguous tensors of the same shape (any KV-cache layout,
e.g. [num_blocks, block_size, num_heads, head_size]); every element is converted:

- src float16, bfloat16 or float32, dst uint8 (quantise): dst = fp8(float32(src) / scale),
  the division in float32 and the conversion rounding to nearest even and saturating to
  +-448; dst holds the float8_e4m3fn bit pattern.
- src uint8 holding float8_e4m3fn bit patterns, dst float16, bfloat16 or float32
  (dequantise): dst = round_to_dtype(float32(fp8 value of src) * scale), the product in
  float32 rounded once to nearest even.

- `scale`: a Python float (used as float32).
- `kv_cache_dtype`: "fp8" or "fp8_e4m3" (both mean e4m3).
`dst_cache` is written entirely (its previous contents are garbage); `src_cache` is not
modified.

Checked: quantised bytes equal the reference's except that at most 0.1% may be one code
step away (an approximate division on a GPU); dequantised values within the dtype's rtol
(they are exact when computed as stated).
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import compare_caches, loaded, random_cache, stored

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def convert_fp8(dst_cache: torch.Tensor, src_cache: torch.Tensor, scale: float, kv_cache_dtype: str) -> None:
    """vllm::_C_cache_ops::convert_fp8(Tensor! dst_cache, Tensor src_cache, float scale,
    str kv_cache_dtype) -> ()"""
'''

OUTPUT_ARGS = ("dst_cache",)


def _case(name, tag, shape, dtype, direction, scale=0.0625, cache="fp8", seed=0):
    """direction: "quantise" (dtype -> uint8) or "dequantise" (uint8 -> dtype)."""
    params = dict(shape=shape, dtype=dtype, direction=direction, scale=scale, cache=cache)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-quantise-bf16", "smoke", (3, 16, 2, 40), "bfloat16", "quantise", scale=0.0078125),
    _case("smoke-dequantise-f16", "smoke", (2, 16, 2, 64), "float16", "dequantise", seed=1),
    _case("llama3-8b-quantise", "check", (32, 16, 8, 128), "bfloat16", "quantise"),
    _case("llama3-8b-dequantise", "check", (32, 16, 8, 128), "bfloat16", "dequantise", scale=0.037),
    _case("paged-layout-f16-quantise", "check", (16, 8, 16, 16, 8), "float16", "quantise",
          cache="fp8_e4m3"),
    _case("f32-dequantise", "check", (7, 16, 4, 96), "float32", "dequantise", scale=3.0),
    _case("f32-quantise-saturating", "check", (5, 32, 2, 128), "float32", "quantise", scale=0.004),
    _case("mla-dequantise-bf16", "check", (9, 64, 576), "bfloat16", "dequantise", scale=0.5),
    _case("llama3-8b-layer-quantise-bench", "bench", (2048, 16, 8, 128), "bfloat16", "quantise"),
    _case("llama3-8b-layer-dequantise-bench", "bench", (2048, 16, 8, 128), "bfloat16", "dequantise"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    if p["direction"] == "quantise":
        src = random_cache(p["shape"], dtype, gen).to(device)
        dst = torch.empty(p["shape"], dtype=torch.uint8, device=device)
    else:
        src = random_cache(p["shape"], torch.uint8, gen).to(device)
        dst = torch.empty(p["shape"], dtype=dtype, device=device)
    return dict(dst_cache=dst, src_cache=src, scale=p["scale"], kv_cache_dtype=p["cache"])


def reference(dst_cache, src_cache, scale, kv_cache_dtype):
    scale_t = torch.tensor(scale, dtype=torch.float32, device=src_cache.device)
    if dst_cache.dtype == torch.uint8:
        dst_cache.copy_(stored(src_cache, kv_cache_dtype, scale_t))
    else:
        dst_cache.copy_(loaded(src_cache, kv_cache_dtype, scale_t, dst_cache.dtype))


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, getattr(torch, case.params["dtype"]))
