"""Store new keys and values into vLLM's paged KV cache in the layout of its paged
attention kernels: vLLM's `reshape_and_cache` custom op (vLLM 0.13).

    reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                      k_scale, v_scale) -> None

For every token t < num_tokens = slot_mapping.shape[0] with slot = slot_mapping[t] >= 0
(a negative slot marks a padding token, which is skipped), let block = slot // block_size
and offset = slot % block_size. For every head h and element d < head_size:

    key_cache[block, h, d // x, offset, d % x] <- K(key[t, h, d])
    value_cache[block, h, d, offset]           <- V(value[t, h, d])

Nothing else in the caches changes.

- `key`, `value`: float16, bfloat16 or float32, [>= num_tokens, num_heads, head_size]
  (rows beyond num_tokens are ignored). The elements of one token are contiguous (heads
  head_size apart); tokens are key.stride(0) (value.stride(0)) apart, which may exceed
  num_heads * head_size when key and value are slices of a fused qkv tensor.
- `key_cache`: [num_blocks, num_heads, head_size // x, block_size, x], contiguous, with
  x = 16 // key_cache.element_size() (8 for 16-bit caches, 4 for float32, 16 for uint8),
  so that x elements of one head are 16 contiguous bytes.
- `value_cache`: [num_blocks, num_heads, head_size, block_size], contiguous.
- `slot_mapping`: int64 [num_tokens]; the non-negative slots are distinct.
- `kv_cache_dtype`: "auto": the caches have key's dtype and K, V copy the values
  unchanged. "fp8" or "fp8_e4m3": the caches are uint8 tensors holding float8_e4m3fn bit
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
def reshape_and_cache(
    key: torch.Tensor,
    value: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    v_scale: torch.Tensor,
) -> None:
    """vllm::_C_cache_ops::reshape_and_cache(Tensor key, Tensor value, Tensor! key_cache,
    Tensor! value_cache, Tensor slot_mapping, str kv_cache_dtype, Tensor k_scale,
    Tensor v_scale) -> ()"""
'''

INOUT_ARGS = ("key_cache", "value_cache")


def _case(name, tag, tokens, heads, head_size, block_size, num_blocks, dtype, cache="auto",
          padding=0, fused=False, extra_rows=0, seed=0):
    """fused: key and value are slices of a [T, (2 * heads + heads) * head_size] qkv tensor."""
    params = dict(tokens=tokens, heads=heads, head_size=head_size, block_size=block_size,
                  num_blocks=num_blocks, dtype=dtype, cache=cache, padding=padding, fused=fused,
                  extra_rows=extra_rows)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f16", "smoke", 7, 2, 32, 16, 4, "float16", padding=2, fused=True),
    _case("smoke-bf16-fp8", "smoke", 5, 2, 64, 8, 3, "bfloat16", cache="fp8", extra_rows=2, seed=1),
    _case("llama3-8b-prefill", "check", 77, 8, 128, 16, 16, "bfloat16", fused=True),
    _case("llama3-8b-fp8", "check", 45, 8, 128, 16, 8, "bfloat16", cache="fp8", padding=5),
    _case("llama3-70b-decode", "check", 33, 8, 128, 16, 40, "float16", padding=3, extra_rows=4),
    _case("qwen2-7b-f32", "check", 29, 4, 128, 32, 4, "float32", fused=True),
    _case("gemma-hd256-fp8-e4m3", "check", 21, 16, 256, 16, 4, "float16", cache="fp8_e4m3"),
    _case("hd64-bs8", "check", 40, 12, 64, 8, 12, "bfloat16", padding=1),
    _case("hd80-phi", "check", 13, 32, 80, 16, 2, "float16"),
    _case("llama3-8b-prefill-bench", "bench", 8192, 8, 128, 16, 1024, "bfloat16", fused=True),
    _case("llama3-70b-fp8-bench", "bench", 4096, 8, 128, 16, 512, "bfloat16", cache="fp8"),
    _case("decode-bench", "bench", 256, 8, 128, 16, 4096, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, h, d, bs, nb = p["tokens"], p["heads"], p["head_size"], p["block_size"], p["num_blocks"]
    rows = t + p["extra_rows"]
    key, value = new_keys_values(rows, h, d, dtype, p["fused"], gen, device)
    cache_dtype = torch.uint8 if p["cache"] != "auto" else dtype
    x = 16 // torch.empty(0, dtype=cache_dtype).element_size()
    key_cache = random_cache((nb, h, d // x, bs, x), cache_dtype, gen).to(device)
    value_cache = random_cache((nb, h, d, bs), cache_dtype, gen).to(device)
    slots = slot_mapping(t, nb, bs, p["padding"], gen).to(device)
    return dict(key=key, value=value, key_cache=key_cache, value_cache=value_cache,
                slot_mapping=slots, kv_cache_dtype=p["cache"], k_scale=cache_scale(0.05, device),
                v_scale=cache_scale(0.008, device))  # saturates a few values


def reference(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    tokens, slots = kept_tokens(slot_mapping)
    bs, x = key_cache.shape[3], key_cache.shape[4]
    blocks, offsets = slots // bs, slots % bs
    k = stored(key[tokens], kv_cache_dtype, k_scale)
    v = stored(value[tokens], kv_cache_dtype, v_scale)
    # dims 0 and 3 indexed: the indexed result is [tokens, heads, head_size // x, x]
    key_cache[blocks, :, :, offsets, :] = k.reshape(k.shape[0], k.shape[1], -1, x)
    value_cache[blocks, :, :, offsets] = v


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, getattr(torch, case.params["dtype"]))
