"""The own part of vllm::reshape_and_cache's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.kv_cache_write import _write_kv


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    # key_cache [blocks, heads, head_size // x, block_size, x], value_cache [blocks, heads, head_size, block_size]
    kc, vc = key_cache.stride(), value_cache.stride()
    _write_kv(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale,
              key_cache.shape[3], (kc[0], kc[3], kc[1], kc[2]), (vc[0], vc[3], vc[1], vc[2]), key_cache.shape[4])
