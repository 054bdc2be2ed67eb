"""Rounding float32 to a kernel's 16-bit operand dtype to nearest even, for the quantised
GEMMs that dequantise weights to their activations' dtype before tl.dot."""

import triton
import triton.language as tl


@triton.jit
def _round_to_dtype(x, dtype: tl.constexpr):
    """float32 -> dtype rounded to nearest even. For bfloat16 the rounding is done on the
    bits, because Triton's CPU interpreter truncates float32 -> bfloat16 casts."""
    if dtype == tl.bfloat16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.to(tl.float32, bitcast=True).to(tl.bfloat16)
    return x.to(dtype)
