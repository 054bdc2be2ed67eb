"""The float16 scales of GGML Q4_0/Q4_1/Q8_0 blocks: two bytes at any offset (the blocks
are byte-packed, so a scale need not be aligned).
"""

import triton
import triton.language as tl


@triton.jit
def _half_at(ptr, offs, mask):
    lo = tl.load(ptr + offs, mask=mask, other=0).to(tl.uint16)
    hi = tl.load(ptr + offs + 1, mask=mask, other=0).to(tl.uint16)
    return (lo | (hi << 8)).to(tl.float16, bitcast=True).to(tl.float32)
