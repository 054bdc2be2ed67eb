"""Storing new keys and values into a paged KV cache (reshape_and_cache,
reshape_and_cache_flash): each token's num_heads * head_size values go to its slot,
through the cache's strides, converted to fp8 for an fp8 cache."""

import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits


@triton.jit
def _write_kv_kernel(
    key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, k_scale_ptr, v_scale_ptr,
    key_stride, value_stride, n_elems, head_size, block_size,
    kb, ks, kh, kx, vb, vs, vh, vd, X: tl.constexpr, FP8: tl.constexpr, BLOCK: tl.constexpr,
):
    # one program per token: its num_heads * head_size keys and values. Key element d of head
    # h sits at block * kb + slot * ks + h * kh + (d // X) * kx + d % X (X: the key cache's
    # innermost split of head_size, 1 where there is none), value element d at
    # block * vb + slot * vs + h * vh + d * vd.
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + token)
    block = slot // block_size
    offset = slot % block_size
    if FP8:
        k_scale = tl.load(k_scale_ptr)
        v_scale = tl.load(v_scale_ptr)
    for start in range(0, n_elems, BLOCK):
        e = start + tl.arange(0, BLOCK)
        mask = (e < n_elems) & ((e * 0 + slot) >= 0)  # padding tokens (slot < 0) store nothing
        h = e // head_size
        d = e % head_size
        k = tl.load(key_ptr + token * key_stride + e, mask=mask)
        v = tl.load(value_ptr + token * value_stride + e, mask=mask)
        k_off = block * kb + offset * ks + h * kh + (d // X) * kx + d % X
        v_off = block * vb + offset * vs + h * vh + d * vd
        if FP8:
            k = _fp8_bits(tl.math.div_rn(k.to(tl.float32), k_scale))
            v = _fp8_bits(tl.math.div_rn(v.to(tl.float32), v_scale))
        tl.store(key_cache_ptr + k_off, k, mask=mask)
        tl.store(value_cache_ptr + v_off, v, mask=mask)


def _write_kv(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale,
              block_size, key_strides, value_strides, x):
    """key_strides: the key cache's (block, slot, head, x-chunk) strides; value_strides:
    the value cache's (block, slot, head, element) strides."""
    tokens = slot_mapping.shape[0]
    if tokens == 0:
        return
    n_elems = key.shape[1] * key.shape[2]
    _write_kv_kernel[(tokens,)](
        key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale, key.stride(0),
        value.stride(0), n_elems, key.shape[2], block_size, *key_strides, *value_strides, X=x,
        FP8=kv_cache_dtype != "auto", BLOCK=min(triton.next_power_of_2(n_elems), 2048),
    )
