"""Rounding float32 to a narrower dtype the way a GPU does, also under Triton's CPU
interpreter: kernels that must round each step as PyTorch does (the losses, diff,
pairwise_distance, renorm, affine_grid_generator) compute in float32 and round here."""

import triton
import triton.language as tl


@triton.jit
def _round_to(x, OUT: tl.constexpr):
    # float32 -> OUT, rounding to nearest even. Triton's CPU interpreter truncates
    # float32 -> bfloat16 casts, so bfloat16 is rounded by hand first and the cast is then
    # exact (on a GPU this is the same value the cast itself would give).
    if OUT == tl.bfloat16:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & -65536
        x = bits.to(tl.float32, bitcast=True)
    return x.to(OUT)


@triton.jit
def _r(x, DT: tl.constexpr):
    # one operation's result rounded to DT, kept in float32
    return _round_to(x, DT).to(tl.float32)
