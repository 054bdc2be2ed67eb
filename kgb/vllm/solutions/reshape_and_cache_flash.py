"""The own part of vllm::reshape_and_cache_flash's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.kv_cache_write import _write_kv


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
                            v_scale):
    # both caches [blocks, block_size, heads, head_size] with the same strides, head_size dense
    strides = (key_cache.stride(0), key_cache.stride(1), key_cache.stride(2), 1)
    _write_kv(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale,
              key_cache.shape[1], strides, strides, 1)
