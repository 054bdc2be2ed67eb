"""exp of large arguments without premature overflow, for cosh and i0 of the unary family:
e^a = 2^k e^r, the power of two applied last."""

import triton
import triton.language as tl


@triton.jit
def _pow2(k):
    # exact 2**k for int32 k in [-126, 127]: the float32 whose exponent field is k + 127
    return ((k + 127) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _exp_scaled(a, scale, shift):
    # scale * e^a * 2^shift for a in [0, 100] (NaN stays NaN). e^a = 2^k e^r with
    # |r| <= ln2 / 2 (Cody-Waite: k * ln2_hi is exact, so r is accurate); the power of two
    # comes last, in two halves (2^129 is not a float32), so that the result overflows only
    # where it must.
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    log2e = 1.4426950408889634
    ln2_hi = 0.693359375  # ln 2 rounded to 10 significant bits
    ln2_lo = -0.00021219444005471377  # ln 2 - ln2_hi
    kf = tl.floor(a * log2e + 0.5)
    kf = tl.where(kf == kf, kf, 0.0)  # NaN lanes: any k, the NaN stays in r
    r = (a - kf * ln2_hi) - kf * ln2_lo
    k = kf.to(tl.int32) + shift
    k1 = k >> 1
    return tl.exp(r) * scale * _pow2(k1) * _pow2(k - k1)
