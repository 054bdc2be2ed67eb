"""Store the compressed latent KV and the rotary key part of new tokens into an MLA
(multi-head latent attention, DeepSeek V2/V3) paged cache: vLLM's `concat_and_cache_mla`
custom op (vLLM 0.13).

    concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale) -> None

For every token t < num_tokens = slot_mapping.shape[0] with slot = slot_mapping[t] >= 0
(a negative slot marks a padding token, which is skipped), let block = slot // block_size
and offset = slot % block_size; the cache entry is the concatenation of the two parts:

    kv_cache[block, offset, :kv_lora_rank] <- S(kv_c[t, :])
    kv_cache[block, offset, kv_lora_rank:] <- S(k_pe[t, :])

Nothing else in the cache changes.

- `kv_c`: float16, bfloat16 or float32, [>= num_tokens, kv_lora_rank], last dimension
  contiguous, rows kv_c.stride(0) apart (often a slice of a wider projection output).
- `k_pe`: [>= num_tokens, pe_dim], same dtype, last dimension contiguous, rows
  k_pe.stride(0) apart.
- `kv_cache`: [num_blocks, block_size, kv_lora_rank + pe_dim], last dimension contiguous,
  blocks kv_cache.stride(0) and entries kv_cache.stride(1) apart.
- `slot_mapping`: int64 [num_tokens]; the non-negative slots are distinct.
- `kv_cache_dtype`: "auto": the cache has kv_c's dtype and S copies values unchanged.
  "fp8" or "fp8_e4m3": the cache is uint8 holding float8_e4m3fn bit patterns and
  S(v) = fp8(float32(v) / scale), the division in float32 and the conversion rounding to
  nearest even and saturating to +-448. (vLLM's "fp8_ds_mla" format is not part of the
  task.)
- `scale`: a float32 tensor of one element (read only for fp8 caches).

Checked: the whole cache after the call; a model-dtype cache must be an exact copy, fp8
bytes equal to the reference's except that at most 0.1% may be one code step away (an
approximate division on a GPU).
"""

import torch

from kgb.operators import Case
from kgb.vllm.cache import (
    cache_scale,
    compare_caches,
    kept_tokens,
    random_cache,
    slot_mapping,
    stored,
)

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def concat_and_cache_mla(
    kv_c: torch.Tensor,
    k_pe: torch.Tensor,
    kv_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    scale: torch.Tensor,
) -> None:
    """vllm::_C_cache_ops::concat_and_cache_mla(Tensor kv_c, Tensor k_pe, Tensor! kv_cache,
    Tensor slot_mapping, str kv_cache_dtype, Tensor scale) -> ()"""
'''

INOUT_ARGS = ("kv_cache",)


def _case(name, tag, tokens, rank, pe, block_size, num_blocks, dtype, cache="auto", padding=0,
          fused=False, entry_pad=0, seed=0):
    """fused: kv_c and k_pe are the two parts of one [T, rank + pe] tensor; entry_pad > 0:
    cache entries are rank + pe + entry_pad elements apart."""
    params = dict(tokens=tokens, rank=rank, pe=pe, block_size=block_size, num_blocks=num_blocks,
                  dtype=dtype, cache=cache, padding=padding, fused=fused, entry_pad=entry_pad)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-bf16", "smoke", 6, 64, 16, 16, 2, "bfloat16", padding=2, fused=True),
    _case("smoke-f16-fp8-padded-entries", "smoke", 5, 96, 32, 8, 3, "float16", cache="fp8",
          entry_pad=8, seed=1),
    _case("deepseek-v3", "check", 77, 512, 64, 64, 4, "bfloat16", fused=True),
    _case("deepseek-v3-fp8", "check", 45, 512, 64, 64, 3, "bfloat16", cache="fp8", padding=4),
    _case("deepseek-v2-lite-bs16", "check", 33, 512, 64, 16, 8, "float16", padding=3),
    _case("f32-fp8-e4m3", "check", 19, 512, 64, 16, 4, "float32", cache="fp8_e4m3", fused=True),
    _case("small-rank", "check", 40, 256, 32, 32, 4, "bfloat16", entry_pad=64),
    _case("deepseek-v3-prefill-bench", "bench", 8192, 512, 64, 64, 256, "bfloat16", fused=True),
    _case("deepseek-v3-fp8-bench", "bench", 8192, 512, 64, 64, 256, "bfloat16", cache="fp8"),
    _case("deepseek-v3-decode-bench", "bench", 256, 512, 64, 64, 1024, "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, r, e, bs, nb = p["tokens"], p["rank"], p["pe"], p["block_size"], p["num_blocks"]
    if p["fused"]:
        both = torch.randn(t, r + e, generator=gen).to(dtype).to(device)
        kv_c, k_pe = both[:, :r], both[:, r:]
    else:
        kv_c = torch.randn(t, r, generator=gen).to(dtype).to(device)
        k_pe = torch.randn(t, e, generator=gen).to(dtype).to(device)
    cache_dtype = torch.uint8 if p["cache"] != "auto" else dtype
    kv_cache = random_cache((nb, bs, r + e + p["entry_pad"]), cache_dtype, gen).to(device)[..., :r + e]
    slots = slot_mapping(t, nb, bs, p["padding"], gen).to(device)
    return dict(kv_c=kv_c, k_pe=k_pe, kv_cache=kv_cache, slot_mapping=slots,
                kv_cache_dtype=p["cache"], scale=cache_scale(0.01, device))


def reference(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    tokens, slots = kept_tokens(slot_mapping)
    bs = kv_cache.shape[1]
    entry = torch.cat([kv_c[tokens], k_pe[tokens]], dim=1)
    kv_cache[slots // bs, slots % bs] = stored(entry, kv_cache_dtype, scale)


def compare(actual, expected, case, inputs):
    return compare_caches(actual, expected, getattr(torch, case.params["dtype"]))
