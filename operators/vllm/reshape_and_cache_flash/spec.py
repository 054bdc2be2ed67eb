"""Store new keys and values into vLLM's paged KV cache in FlashAttention's layout:
vLLM's `reshape_and_cache_flash` custom op (vLLM 0.13).

    reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping,
                            kv_cache_dtype, k_scale, v_scale) -> None

For every token t < num_tokens = slot_mapping.shape[0] with slot = slot_mapping[t] >= 0
(a negative slot marks a padding token, which is skipped), let block = slot // block_size
and offset = slot % block_size. For every head h and element d < head_size:

    key_cache[block, offset, h, d]   <- K(key[t, h, d])
    value_cache[block, offset, h, d] <- V(value[t, h, d])

Nothing else in the caches (or in memory they share) changes.

- `key`, `value`: float16, bfloat16 or float32, [>= num_tokens, num_heads, head_size]
  (rows beyond num_tokens are ignored). The elements of one token are contiguous (heads
  head_size apart); tokens are key.stride(0) (value.stride(0)) apart, which may exceed
  num_heads * head_size (slices of a fused qkv tensor).
- `key_cache`, `value_cache`: [num_blocks, block_size, num_heads, head_size] views with
  the same strides, the last dimension contiguous and the other three arbitrary: plain
  contiguous tensors ("NHD"); permuted views of [num_blocks, num_heads, block_size,
  head_size] memory ("HND"); or the two halves of one [num_blocks, 2, block_size,
  num_heads, head_size] tensor (key and value blocks interleaved, block stride twice
  the block's size).
- `slot_mapping`: int64 [num_tokens]; the non-negative slots are distinct.
- `kv_cache_dtype`: "auto": the caches have key's dtype and K, V copy the values
  unchanged. "fp8" or "fp8_e4m3": the caches are uint8 views holding float8_e4m3fn bit
  patterns, K(v) = fp8(float32(v) / k_scale) and V(v) = fp8(float32(v) / v_scale), the
  division in float32 and the conversion rounding to nearest even and saturating to
  +-448.
- `k_scale`, `v_scale`: float32 tensors of one element (read only for fp8 caches).

Checked: the whole caches after the call; model-dtype caches must be exact copies, fp8
bytes equal to the reference's except that at most 0.1% may be one code step away (an
approximate division on a GPU).
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import (
    cache_scale,
    compare_caches,
    kept_tokens,
    new_keys_values,
    random_cache,
    slot_mapping,
    stored,
)

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def reshape_and_cache_flash(
    key: torch.Tensor,
    value: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    v_scale: torch.Tensor,
) -> None:
    """vllm::_C_cache_ops::reshape_and_cache_flash(Tensor key, Tensor value,
    Tensor! key_cache, Tensor! value_cache, Tensor slot_mapping, str kv_cache_dtype,
    Tensor k_scale, Tensor v_scale) -> ()"""
'''

INOUT_ARGS = ("key_cache", "value_cache")


def _case(name, tag, tokens, heads, head_size, block_size, num_blocks, dtype, cache="auto",
          layout="nhd", padding=0, fused=False, seed=0):
    """layout: nhd | hnd | interleaved (see the task text)."""
    params = dict(tokens=tokens, heads=heads, head_size=head_size, block_size=block_size,
                  num_blocks=num_blocks, dtype=dtype, cache=cache, layout=layout, padding=padding,
                  fused=fused)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-bf16-hnd", "smoke", 7, 2, 32, 16, 3, "bfloat16", layout="hnd", padding=2, fused=True),
    _case("smoke-f16-fp8-interleaved", "smoke", 5, 2, 64, 16, 2, "float16", cache="fp8",
          layout="interleaved", seed=1),
    _case("llama3-8b-nhd", "check", 77, 8, 128, 16, 16, "bfloat16", fused=True),
    _case("llama3-8b-hnd-fp8", "check", 45, 8, 128, 16, 8, "bfloat16", cache="fp8", layout="hnd",
          padding=5),
    _case("llama3-70b-interleaved", "check", 33, 8, 128, 32, 8, "float16", layout="interleaved",
          padding=3),
    _case("qwen2-7b-f32", "check", 29, 4, 128, 16, 4, "float32", fused=True),
    _case("gemma-hd256-fp8-e4m3", "check", 21, 16, 256, 16, 4, "bfloat16", cache="fp8_e4m3"),
    _case("hd64-bs64", "check", 130, 12, 64, 64, 4, "bfloat16", layout="hnd"),
    _case("deepseek-distill-hd96", "check", 13, 20, 96, 16, 2, "float16", layout="interleaved"),
    _case("llama3-8b-prefill-bench", "bench", 8192, 8, 128, 16, 1024, "bfloat16", fused=True),
    _case("llama3-70b-fp8-hnd-bench", "bench", 4096, 8, 128, 16, 512, "bfloat16", cache="fp8",
          layout="hnd"),
    _case("decode-bench", "bench", 256, 8, 128, 16, 4096, "bfloat16", layout="interleaved"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, h, d, bs, nb = p["tokens"], p["heads"], p["head_size"], p["block_size"], p["num_blocks"]
    key, value = new_keys_values(t, h, d, dtype, p["fused"], gen, device)
    cache_dtype = torch.uint8 if p["cache"] != "auto" else dtype
    if p["layout"] == "hnd":
        key_cache = random_cache((nb, h, bs, d), cache_dtype, gen).to(device).transpose(1, 2)
        value_cache = random_cache((nb, h, bs, d), cache_dtype, gen).to(device).transpose(1, 2)
    elif p["layout"] == "interleaved":
        key_cache, value_cache = random_cache((nb, 2, bs, h, d), cache_dtype, gen).to(device).unbind(1)
    else:
        key_cache = random_cache((nb, bs, h, d), cache_dtype, gen).to(device)
        value_cache = random_cache((nb, bs, h, d), cache_dtype, gen).to(device)
    slots = slot_mapping(t, nb, bs, p["padding"], gen).to(device)
    return dict(key=key, value=value, key_cache=key_cache, value_cache=value_cache,
                slot_mapping=slots, kv_cache_dtype=p["cache"], k_scale=cache_scale(0.05, device),
                v_scale=cache_scale(0.008, device))


def reference(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    tokens, slots = kept_tokens(slot_mapping)
    bs = key_cache.shape[1]
    key_cache[slots // bs, slots % bs] = stored(key[tokens], kv_cache_dtype, k_scale)
    value_cache[slots // bs, slots % bs] = stored(value[tokens], kv_cache_dtype, v_scale)


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, getattr(torch, case.params["dtype"]))
