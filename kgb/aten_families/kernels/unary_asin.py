"""asin of the unary family, elementwise on float32."""

import triton
import triton.language as tl


@triton.jit
def _asin(x):
    # pi/2 split in two floats, so that pi/2 - r keeps its accuracy when r is close to pi/2
    # (locals: a kernel may not read plain module globals on the GPU)
    pio2_hi = 1.5707963705062866
    pio2_lo = -4.371138828673793e-08
    a = tl.abs(x)
    # |x| <= 1/2: asin(a) = a + a z P(z) with z = a^2.
    # |x| >  1/2: asin(a) = pi/2 - 2 asin(s) with s = sqrt(z), z = (1 - a) / 2 <= 1/4.
    big = a > 0.5
    z = tl.where(big, 0.5 * (1.0 - a), a * a)
    s = tl.where(big, tl.sqrt(z), a)
    # P: least-squares fit (relative error) of (asin(s) - s) / s^3 on z = s^2 in [0, 1/4]
    p = 0.03380575031042099
    p = p * z + 0.017077859491109848
    p = p * z + 0.03111615590751171
    p = p * z + 0.04459803178906441
    p = p * z + 0.07500098645687103
    p = p * z + 0.1666666567325592
    q = s * z * p
    r = tl.where(big, pio2_hi - (2.0 * s - (pio2_lo - 2.0 * q)), s + q)
    r = tl.where(a > 1.0, float("nan"), r)
    return tl.where(x < 0, -r, r)
