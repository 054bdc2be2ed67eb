"""The power functions of the pointwise family's pow solution: C's pow on floats and
exact, wrapping repeated multiplication on integers."""

import triton
import triton.language as tl


@triton.jit
def _pow_float(x, y):
    # x ** y with C's pow rules, through exp2(y * log2|x|) in x's type (float64 for float32
    # data, so the result is correctly rounded to float32 in practice).
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    y_int = tl.math.floor(y) == y
    y_odd = y_int & (tl.math.floor(y * 0.5) != y * 0.5)
    # a negative base needs an integral exponent (sign from its parity), except -inf
    neg = tl.where(y_int, tl.where(y_odd, -r, r), tl.where(x == float("-inf"), r, float("nan")))
    r = tl.where(x < 0, neg, r)
    r = tl.where((tl.abs(x) == 1) & (tl.abs(y) == float("inf")), 1.0, r)  # (+-1) ** +-inf
    return tl.where((y == 0) | (x == 1), 1.0, r)  # even for NaN in the other operand


@triton.jit
def _pow_int(x, y, NBITS: tl.constexpr):
    # square-and-multiply over every bit of the exponent (wrapping like C integers);
    # negative exponents give 1 / x ** -y truncated: 0 unless x is 1 or -1
    r = x * 0 + 1
    base = x
    e = y
    for _ in range(NBITS):
        r = tl.where((e & 1) != 0, r * base, r)
        base = base * base
        e = e >> 1
    neg = tl.where(x == 1, 1, tl.where(x == -1, tl.where((y & 1) != 0, -1, 1), 0)).to(r.dtype)
    return tl.where(y < 0, neg, r)
