"""The own part of vllm::reshape_and_cache_flash's solution (see kgb/vllm/generate.py).
"""

import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits


@triton.jit
def _reshape_and_cache_flash_kernel(
    key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, k_scale_ptr, v_scale_ptr,
    key_stride, value_stride, n_elems, head_size, block_size, block_stride, page_stride,
    head_stride, FP8: tl.constexpr, BLOCK: tl.constexpr,
):
    # one program per token: its num_heads * head_size keys and values
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + token)
    base = (slot // block_size) * block_stride + (slot % block_size) * page_stride
    if FP8:
        k_scale = tl.load(k_scale_ptr)
        v_scale = tl.load(v_scale_ptr)
    for start in range(0, n_elems, BLOCK):
        e = start + tl.arange(0, BLOCK)
        mask = (e < n_elems) & ((e * 0 + slot) >= 0)  # padding tokens (slot < 0) store nothing
        k = tl.load(key_ptr + token * key_stride + e, mask=mask)
        v = tl.load(value_ptr + token * value_stride + e, mask=mask)
        dst = base + (e // head_size) * head_stride + e % head_size
        if FP8:
            k = _fp8_bits(tl.math.div_rn(k.to(tl.float32), k_scale))
            v = _fp8_bits(tl.math.div_rn(v.to(tl.float32), v_scale))
        tl.store(key_cache_ptr + dst, k, mask=mask)
        tl.store(value_cache_ptr + dst, v, mask=mask)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
                            v_scale):
    tokens = slot_mapping.shape[0]
    if tokens == 0:
        return
    n_elems = key.shape[1] * key.shape[2]
    _reshape_and_cache_flash_kernel[(tokens,)](
        key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale, key.stride(0),
        value.stride(0), n_elems, key.shape[2], key_cache.shape[1], key_cache.stride(0),
        key_cache.stride(1), key_cache.stride(2), FP8=kv_cache_dtype != "auto",
        BLOCK=min(triton.next_power_of_2(n_elems), 2048),
    )
