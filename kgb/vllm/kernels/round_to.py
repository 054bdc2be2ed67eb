"""Rounding float32 to the input dtype and back inside a kernel: a kernel that computes in
float32 rounds where the op stores (or PyTorch computes) in the input dtype.
"""

import triton
import triton.language as tl


@triton.jit
def _round_to(x, KIND: tl.constexpr):
    """Round float32 to the input dtype (KIND 0: float32, 1: float16, 2: bfloat16) and
    back. bfloat16 rounds to nearest even by hand: the CPU interpreter's cast truncates."""
    if KIND == 1:
        return x.to(tl.float16).to(tl.float32)
    elif KIND == 2:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        return bits.to(tl.float32, bitcast=True)
    else:
        return x
