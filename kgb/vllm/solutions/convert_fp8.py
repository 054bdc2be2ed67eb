"""The own part of vllm::convert_fp8's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits
from kgb.vllm.kernels.round_to import _round_to


@triton.jit
def _convert_fp8_kernel(src_ptr, dst_ptr, n, scale, QUANTISE: tl.constexpr, KIND: tl.constexpr,
                        BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if QUANTISE:
        x = tl.load(src_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst_ptr + offs, _fp8_bits(tl.math.div_rn(x, scale)), mask=mask)
    else:
        b = tl.load(src_ptr + offs, mask=mask, other=0)
        x = b.to(tl.float8e4nv, bitcast=True).to(tl.float32) * scale
        tl.store(dst_ptr + offs, _round_to(x, KIND).to(dst_ptr.dtype.element_ty), mask=mask)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.uint8: 0}


def convert_fp8(dst_cache, src_cache, scale, kv_cache_dtype) -> None:
    n = src_cache.numel()
    if n == 0:
        return
    block = 1024
    _convert_fp8_kernel[(triton.cdiv(n, block),)](
        src_cache, dst_cache, n, scale, QUANTISE=dst_cache.dtype == torch.uint8,
        KIND=_KIND[dst_cache.dtype], BLOCK=block,
    )
