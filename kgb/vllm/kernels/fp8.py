"""float32 -> float8_e4m3fn bit patterns, for the solutions that store fp8 (quantised
outputs, fp8 KV caches).
"""

import triton
import triton.language as tl


@triton.jit
def _fp8_bits(x):
    """float32 -> float8_e4m3fn bit pattern: saturate to +-448, round to nearest even.
    Done in integers because the CPU interpreter's fp8 cast rounds wrongly."""
    x = tl.minimum(tl.maximum(x, -448.0), 448.0)
    bits = x.to(tl.int32, bitcast=True)
    sign = ((bits >> 31) & 1) << 7
    a = bits & 0x7FFFFFFF
    exp = a >> 23
    # normal fp8 (|x| >= 2**-6): keep 3 mantissa bits, rebias the exponent from 127 to 7
    normal = ((a + 0x7FFFF + ((a >> 20) & 1)) >> 20) - 960
    # subnormal fp8: the integer nearest to |x| * 2**9
    m = (a & 0x7FFFFF) | 0x800000
    s = tl.minimum(tl.maximum(141 - exp, 21), 30)
    q = m >> s
    rem = m & ((1 << s) - 1)
    half = 1 << (s - 1)
    q = q + ((rem > half) | ((rem == half) & ((q & 1) == 1))).to(tl.int32)
    code = tl.where(exp >= 121, normal, tl.where(exp == 0, 0, q))
    return (code | sign).to(tl.uint8)
