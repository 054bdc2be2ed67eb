"""The own part of vllm::concat_and_cache_mla's solution (see kgb/vllm/generate.py).
"""

import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits


@triton.jit
def _concat_and_cache_mla_kernel(
    kv_c_ptr, k_pe_ptr, cache_ptr, slot_ptr, scale_ptr, kv_c_stride, k_pe_stride, rank, pe_dim,
    block_size, block_stride, entry_stride, FP8: tl.constexpr, BLOCK: tl.constexpr,
):
    # one program per token: the entry is kv_c's rank values, then k_pe's pe_dim values
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + token)
    dst = cache_ptr + (slot // block_size) * block_stride + (slot % block_size) * entry_stride
    if FP8:
        scale = tl.load(scale_ptr)
    width = rank + pe_dim
    for start in range(0, width, BLOCK):
        e = start + tl.arange(0, BLOCK)
        valid = (e * 0 + slot) >= 0  # padding tokens (slot < 0) store nothing
        in_c = e < rank
        in_pe = (e >= rank) & (e < width)
        c = tl.load(kv_c_ptr + token * kv_c_stride + e, mask=in_c & valid, other=0.0)
        pe = tl.load(k_pe_ptr + token * k_pe_stride + (e - rank), mask=in_pe & valid, other=0.0)
        v = tl.where(in_c, c, pe)  # a select, not a sum: the copy keeps every bit
        if FP8:
            v = _fp8_bits(tl.math.div_rn(v.to(tl.float32), scale))
        tl.store(dst + e, v, mask=(e < width) & valid)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    tokens = slot_mapping.shape[0]
    if tokens == 0:
        return
    rank, pe_dim = kv_c.shape[1], k_pe.shape[1]
    _concat_and_cache_mla_kernel[(tokens,)](
        kv_c, k_pe, kv_cache, slot_mapping, scale, kv_c.stride(0), k_pe.stride(0), rank, pe_dim,
        kv_cache.shape[1], kv_cache.stride(0), kv_cache.stride(1), FP8=kv_cache_dtype != "auto",
        BLOCK=min(triton.next_power_of_2(rank + pe_dim), 1024),
    )
