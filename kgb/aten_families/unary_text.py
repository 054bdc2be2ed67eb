"""The task texts of the unary family (kgb/aten_families/unary.py), one per member. The
paragraphs several members share (shapes and layouts, the dtype rules) are written once
below and filled in by `task(name)`."""

from __future__ import annotations

PARAGRAPHS = {
    "shape": """\
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.""",
    # members whose result may equal the input (neg, floor of integers, ...)
    "shape_copy": """\
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides), even where it equals the input; `self` must not be modified.""",
    "promoted": """\
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.""",
    "floats_only": """\
- Dtypes: float16, bfloat16 and float32 (the result keeps the dtype); compute half-precision
  inputs in float32 and round once. Integer, bool, float64 and complex inputs are not
  required.""",
    "half": "- Compute half-precision inputs in float32 and round once.",
}


def task(name: str) -> str:
    return TASKS[name].format(**PARAGRAPHS)


TASKS = {
    "acosh": """\
Inverse hyperbolic cosine, elementwise: `aten::acosh` (default overload).

out[i] = acosh(self[i]) = log(x + sqrt(x*x - 1)), the non-negative solution y of
cosh(y) = x.

- Domain: x >= 1. acosh(1) = 0, acosh(+inf) = +inf; x < 1 (including -inf) gives NaN, and
  NaN gives NaN. Large x (up to the float32 maximum, about 3.4e38) must not overflow:
  acosh(x) is close to log(2x) there.
- Accuracy: compute half-precision inputs in float32 and round once. Results near x = 1
  should keep their relative accuracy (acosh(1 + t) is about sqrt(2t)); avoid forming
  x*x - 1 from a rounded x*x.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32 (PyTorch's default float dtype).
  float64 and complex inputs are not required.
{shape}

Required entry point: `acosh` (aten::acosh(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (acosh.int, acosh.float, acosh.complex,
acosh.Scalar).
""",
    "asin": """\
Inverse sine, elementwise: `aten::asin` (default overload).

out[i] = asin(self[i]), the angle y in [-pi/2, pi/2] with sin(y) = x.

- Domain: -1 <= x <= 1; asin(+-1) = +-pi/2. |x| > 1 (including +-inf) and NaN give NaN.
  The sign of zero need not be kept.
- Accuracy: relative accuracy is expected across the whole domain, near 0 (asin(x) is
  about x) and near +-1 (where the slope is infinite) alike. Triton has no asin
  primitive: build it from sqrt, polynomials and the like. Compute half-precision inputs
  in float32 and round once.
{promoted}
{shape}

Required entry point: `asin` (aten::asin(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (asin.int, asin.float, asin.complex,
asin.Scalar).
""",
    "bitwise_not": """\
Bitwise NOT, elementwise: `aten::bitwise_not` (default overload).

out[i] = ~self[i], in the dtype of `self`.
- Integer dtypes (int8, int16, int32, int64, uint8): every bit flipped; for signed
  integers that is -x - 1, for uint8 255 - x.
- Bool: logical not (True <-> False). Bool tensors store one byte per element, 0 or 1.
- Floating and complex inputs are rejected by PyTorch and not required.
{shape_copy}

Required entry point: `bitwise_not` (aten::bitwise_not(Tensor self) -> Tensor). Not
required: the `out=` variant.
""",
    "cosh": """\
Hyperbolic cosine, elementwise: `aten::cosh` (default overload).

out[i] = cosh(self[i]) = (exp(x) + exp(-x)) / 2.

- cosh is even and at least 1; cosh(+-inf) = +inf, NaN gives NaN. In float32 the exact
  result overflows to +inf for |x| above about 89.416. Between 88.72 (where exp(x) itself
  overflows) and 89.416 PyTorch's own kernels disagree (some give +inf), so the tests
  avoid float32 inputs in that band; elsewhere large |x| must give the finite result.
- Accuracy: float32 results are compared with rtol 1e-5 also for large |x|; an exp of a
  rounded product x * log2(e) loses about that much there, so split the argument
  carefully. Compute half-precision inputs in float32 and round once.
{promoted}
{shape}

Required entry point: `cosh` (aten::cosh(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads (cosh.int, cosh.float, cosh.complex, cosh.Scalar).
""",
    "erfc": """\
Complementary error function, elementwise: `aten::erfc` (default overload).

out[i] = erfc(self[i]) = 1 - erf(x) = (2 / sqrt(pi)) * integral from x to inf of exp(-t^2) dt.

- erfc(-inf) = 2, erfc(0) = 1, erfc(+inf) = 0, NaN gives NaN. For large positive x the
  result is tiny (erfc(4) is about 1.5e-8, erfc(10) about 2e-45, a float32 subnormal);
  computing 1 - erf(x) there cancels, a proper implementation keeps relative accuracy
  (the comparison's absolute tolerance, 1e-4 x the RMS of the expected output, is lenient
  on tiny results).
{half}
{promoted}
{shape}

Required entry point: `erfc` (aten::erfc(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads (erfc.int, erfc.float, erfc.Scalar).
""",
    "floor": """\
Floor, elementwise: `aten::floor` (default overload).

out[i] = floor(self[i]), the largest integer value not greater than x, in the dtype of
`self`.

- Floating dtypes float16, bfloat16, float32: floor(-0.5) = -1, floor(-0.0) = -0.0 (the
  sign of zero need not be kept), +-inf and NaN are returned unchanged; values too large
  to have a fraction are returned unchanged.
- Integer dtypes (int8, int16, int32, int64, uint8): the result is an exact copy of the
  values, same dtype. Bool is rejected by PyTorch and not required; float64 and complex
  are not required.
{shape_copy}

Required entry point: `floor` (aten::floor(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (floor.int, floor.float, floor.Scalar).
""",
    "hardsigmoid": """\
Hard sigmoid activation, elementwise: `aten::hardsigmoid` (default overload).

out[i] = min(max(x + 3, 0), 6) / 6, x = self[i]: 0 for x <= -3, 1 for x >= 3, linear
(x / 6 + 1/2) in between.

- +-inf give 1 and 0; NaN gives NaN (the clamps must not swallow it).
{floats_only}
{shape}

Required entry point: `hardsigmoid` (aten::hardsigmoid(Tensor self) -> Tensor). Not
required: the `out=` variant and the in-place `hardsigmoid_`.
""",
    "i0": """\
Modified Bessel function of the first kind, order 0, elementwise: `aten::i0` (default overload).

out[i] = I0(x) = sum over k >= 0 of (x^2 / 4)^k / (k!)^2, x = self[i].

- I0 is even, I0(0) = 1, and it grows like exp(|x|) / sqrt(2 pi |x|). Triton has no Bessel
  primitive: a power series for small |x| and the asymptotic expansion
  exp(|x|) / sqrt(2 pi |x|) * (1 + 1/(8|x|) + 9/(2!(8|x|)^2) + ...) for large |x| (or any
  other approximation accurate to float32) will do.
- PyTorch returns NaN for x = +-inf (its formula divides inf by inf) and NaN for NaN;
  follow that. For finite |x| above about 91.9 the float32 result overflows to +inf.
  PyTorch forms exp(|x|) first and so already overflows for |x| > 88.72; float32 inputs
  between 88.72 and 91.9 are therefore not tested.
{half}
{promoted}
{shape}

Required entry point: `i0` (aten::i0(Tensor self) -> Tensor). Not required: the `out=`
variant and the in-place `i0_`.
""",
    "log10": """\
Base-10 logarithm, elementwise: `aten::log10` (default overload).

out[i] = log10(self[i]).

- log10(0) = -inf (either sign of zero), log10(+inf) = +inf, x < 0 (including -inf) gives
  NaN, NaN gives NaN. Subnormal float32 inputs are not tested.
{half}
{promoted}
{shape}

Required entry point: `log10` (aten::log10(Tensor self) -> Tensor). Not required: the
`out=` variant and the Python-scalar overloads (log10.int, log10.float, log10.complex,
log10.Scalar).
""",
    "logit": """\
Logit (inverse sigmoid), elementwise: `aten::logit` (default overload).

out[i] = log(z / (1 - z)), where z = self[i], first clamped to [eps, 1 - eps] when `eps`
is given.

- `eps` (a Python float or None): None, or a negative value, means no clamping; then
  logit(0) = -inf, logit(1) = +inf, and x outside [0, 1] gives NaN. With eps >= 0 the
  input is clamped as z = eps if x < eps, else 1 - eps if x > 1 - eps, else x (in that
  order, so eps > 0.5 maps everything below eps to eps and the rest to 1 - eps); NaN stays
  NaN. Compute the bounds in float32 (lo = eps, hi = 1 - lo) for every input dtype; the
  tests use values of eps that are exact in every dtype for half-precision inputs.
{half}
{promoted}
{shape}

Required entry point: `logit` (aten::logit(Tensor self, float? eps=None) -> Tensor). Not
required: the `out=` variant and the in-place `logit_`.
""",
    "mish": """\
Mish activation, elementwise: `aten::mish` (default overload).

out[i] = x * tanh(softplus(x)) = x * tanh(log(1 + exp(x))), x = self[i].

- mish(+inf) = +inf; mish(-inf) is NaN in PyTorch (-inf * 0), NaN gives NaN. For large
  x the result is x (exp(x) overflows for x > 88.7: do not let that produce NaN); for very
  negative x it is about x * exp(x), tiny (underflow to zero is acceptable).
- Triton has no tanh or log1p: note tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1).
{floats_only}
{shape}

Required entry point: `mish` (aten::mish(Tensor self) -> Tensor). Not required: the
`out=` variant and the in-place `mish_`.
""",
    "neg": """\
Negation, elementwise: `aten::neg` (default overload).

out[i] = -self[i], in the dtype of `self`.

- Floating dtypes float16, bfloat16, float32: the sign flips (NaN stays NaN; the sign of
  zero need not be kept).
- Integer dtypes (int8, int16, int32, int64, uint8) wrap around as two's complement: the
  most negative value maps to itself, and for uint8 -x is (256 - x) mod 256. Bool is
  rejected by PyTorch and not required; float64 and complex are not required.
{shape_copy}

Required entry point: `neg` (aten::neg(Tensor self) -> Tensor). Not required: the `out=`
variant and the Python-scalar overloads (neg.int, neg.float, neg.complex, neg.Scalar).
""",
    "polygamma": """\
Polygamma function, elementwise: `aten::polygamma` (default overload).

out[i] = psi^(n)(x), the n-th derivative of the digamma function psi = Gamma' / Gamma, at
x = self[i]. n = 0 is digamma, n = 1 trigamma; for n >= 1,
psi^(n)(x) = (-1)^(n+1) n! * sum over k >= 0 of 1 / (x + k)^(n+1).

- `n` is a Python int >= 0 (the tests use 0 to 4); the same n applies to every element.
- Useful facts: psi^(n)(x + 1) = psi^(n)(x) + (-1)^n n! / x^(n+1), and for large x the
  asymptotic expansions psi(x) ~ ln x - 1/(2x) - sum B_2k / (2k x^2k) and
  psi^(n)(x) ~ (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum B_2k (2k+n-1)! / ((2k)! x^(2k+n))]
  (B_2k the Bernoulli numbers 1/6, -1/30, 1/42, ...). Triton has no lgamma or digamma.
- Domain: every real x except the poles x = 0, -1, -2, ... Negative non-integer x is valid
  (digamma satisfies psi(x) = psi(1 - x) - pi / tan(pi x)). Digamma at the poles follows
  PyTorch: -inf at +0, +inf at -0, NaN at negative integers and at -inf; psi(+inf) = +inf;
  NaN gives NaN. For n >= 1, values at the poles and at +-inf are not tested (PyTorch's
  kernels are inconsistent there), nor are negative inputs within 0.1 of an integer.
  Results that overflow float32 (n! / x^(n+1) for tiny x) are +-inf.
{half}
{promoted}
{shape}

Required entry point: `polygamma` (aten::polygamma(int n, Tensor self) -> Tensor). Not
required: the `out=` variant and the in-place `polygamma_`.
""",
    "rsqrt": """\
Reciprocal square root, elementwise: `aten::rsqrt` (default overload).

out[i] = 1 / sqrt(self[i]).

- rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = 0, x < 0 (including -inf) gives NaN,
  NaN gives NaN. Subnormal float32 inputs are not tested.
{half}
{promoted}
{shape}

Required entry point: `rsqrt` (aten::rsqrt(Tensor self) -> Tensor). Not required: the
`out=` variant.
""",
    "sgn": """\
Sign, extended to complex numbers, elementwise: `aten::sgn` (default overload).

Result dtype = dtype of `self`.
- Real floating dtypes float16, bfloat16, float32: 1 for x > 0, -1 for x < 0, 0 for +-0
  (the sign of zero need not be kept), +-1 for +-inf, and 0 for NaN (PyTorch computes
  (0 < x) - (x < 0), which is 0 for NaN).
- Integer dtypes (int8, int16, int32, int64, uint8): -1, 0 or 1 in that dtype.
- Bool: the value itself (True stays True).
- complex64: z / |z| for z != 0 (a unit-modulus number with the argument of z), and 0 for
  z = 0. |z| must not overflow or underflow for components anywhere in the normal float32
  range (1e-30 or 1e30, say). Complex infinities and NaN, and subnormal components, are not
  tested. float64 and complex128 are not required.
{shape_copy}

Required entry point: `sgn` (aten::sgn(Tensor self) -> Tensor). Not required: the `out=`
variant.
""",
    "silu": """\
SiLU (swish) activation, elementwise: `aten::silu` (default overload).

out[i] = x * sigmoid(x) = x / (1 + exp(-x)), x = self[i].

- silu(+inf) = +inf; silu(-inf) is NaN in PyTorch (-inf / inf), and NaN gives NaN. For
  very negative x the result is a tiny negative number (underflow to -0 is acceptable).
{floats_only}
{shape}

Required entry point: `silu` (aten::silu(Tensor self) -> Tensor). Not required: the
`out=` variant and the in-place `silu_`.
""",
    "special_entr": """\
Elementwise entropy term: `aten::special_entr` (default overload, torch.special.entr).

out[i] = -x * log(x) for x > 0, 0 for x = 0, -inf for x < 0, x = self[i].

- entr(+inf) = -inf, entr(-inf) = -inf, NaN gives NaN, either sign of zero gives 0.
{half}
{promoted}
{shape}

Required entry point: `special_entr` (aten::special_entr(Tensor self) -> Tensor). Not
required: the `out=` variant.
""",
    "square": """\
Square, elementwise: `aten::square` (default overload).

out[i] = self[i] * self[i].

- Floating dtypes float16, bfloat16, float32 keep their dtype; compute half-precision
  inputs in float32 and round once. Overflow gives +inf; NaN gives NaN.
- Integer dtypes (int8, int16, int32, int64, uint8) keep their dtype and wrap around on
  overflow (the product modulo 2**bits, as two's complement).
- Bool inputs give an int64 result (0 or 1), following PyTorch's type promotion for
  pow(bool, 2). float64 and complex are not required.
{shape_copy}

Required entry point: `square` (aten::square(Tensor self) -> Tensor). Not required: the
`out=` variant.
""",
}
