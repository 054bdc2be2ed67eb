"""What the pointwise family's members (pointwise.py) show a method: each operator's task
text and signatures, word for word as its hand-written spec had them."""

TASKS = {
    "fmax": """\
NaN-ignoring elementwise maximum: `aten::fmax`.

    out = max(self, other), where a NaN loses to a number (C's fmax)

Required entry point: `fmax` (the default overload; `fmax.out` is not required).

- If exactly one of the two values is NaN the other one is returned; the result is NaN only
  where both are NaN. (Unlike `maximum`, which propagates NaN.) For integers and bool it is
  the ordinary maximum (bool: logical or).
- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The result dtype is PyTorch's
  promotion of the two (dimensioned tensors decide, a 0-d tensor only raises the category):
  float16 with bfloat16 -> float32, int32 with float32 -> float32, bfloat16 with a 0-d
  float32 -> bfloat16 (the 0-d value is first rounded to bfloat16).
- Empty and 0-d tensors are valid.
""",
    "heaviside": """\
Heaviside step function: `aten::heaviside`.

    out = 0 where self < 0,  values where self == 0,  1 where self > 0

Required entry point: `heaviside` (the default overload; `heaviside.out` is not required).

- NaN in `self` is neither == 0 nor > 0, so it gives 0 (PyTorch computes
  `self == 0 ? values : (self > 0)`); -0.0 counts as zero. `values` may hold anything,
  NaN included, and is returned as is where `self` is zero.
- `self` and `values` must have the same dtype (PyTorch refuses mixed dtypes); the result
  has that dtype. Dtypes: float16, bfloat16, float32, int8..int64 and bool (for bool,
  `self > 0` means True).
- Broadcasting: `self` and `values` broadcast against each other (often `values` is a 0-d
  tensor or a vector); the result has the broadcast shape. Inputs may be non-contiguous
  and must not be modified.
- Empty and 0-d tensors are valid.
""",
    "logaddexp2": """\
Base-2 log-sum-exp of two tensors: `aten::logaddexp2`.

    out = log2(2**self + 2**other)

Required entry point: `logaddexp2` (the default overload; `logaddexp2.out` is not required).

- Must be computed stably: 2**x overflows float32 beyond 128, and the inputs here reach
  hundreds. PyTorch computes max(a, b) + log1p(2**-|a - b|) / ln 2, with the special case
  a == b == +-inf giving that infinity. So: +inf with anything but NaN gives +inf, -inf
  with a finite b gives b, and NaN anywhere gives NaN.
- Floating dtypes only: float16, bfloat16, float32 (PyTorch refuses integer inputs).
  float16/bfloat16 are computed in float32 and rounded once. The result dtype is PyTorch's
  promotion of the two (dimensioned tensors decide, a 0-d tensor only raises the
  category): float16 with bfloat16 -> float32, bfloat16 with a 0-d float32 -> bfloat16.
  Such a 0-d tensor of a wider dtype is only tested with values exactly representable in
  the common dtype (PyTorch's CPU and CUDA kernels disagree on whether to round it first).
- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Empty and 0-d tensors are valid.
""",
    "mul": """\
Elementwise product: `aten::mul.Tensor` and `aten::mul.Scalar`.

    out = self * other

Required entry points: `mul_Tensor` (other is a tensor) and `mul_Scalar` (other is a Python
number). The `out=` variants and the list/pure-scalar overloads (`mul.left_t`, `mul.int`,
...) are not required.

- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous (transposed, sliced, expanded) and
  must not be modified; the result is a new tensor (any strides).
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The result dtype is PyTorch's
  promotion of the two operands: dimensioned tensors decide first, a 0-d tensor or a Python
  number only raises the category (bool -> int -> float), and a Python float meeting
  integer tensors gives float32, a Python int meeting bool tensors int64. Examples: float16
  * bfloat16 -> float32, bfloat16 * 0-d float32 -> bfloat16, int32 * 2.5 -> float32,
  bool * 3 -> int64, bool * bool -> bool (logical and).
- Precision: float16/bfloat16 are computed in float32 and rounded once. Integers wrap
  around on overflow.
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Empty and 0-d tensors are valid.
""",
    "pow": """\
Elementwise power: `aten::pow.Tensor_Tensor`, `pow.Tensor_Scalar` and `pow.Scalar`.

    out = self ** exponent

Required entry points: `pow_Tensor_Tensor` (both tensors), `pow_Tensor_Scalar` (exponent
is a Python number) and `pow_Scalar` (`self` is a Python number, exponent a tensor). The
`out=` variants and the pure-scalar overloads (`pow.int`, `pow.float`, ...) are not
required.

- Broadcasting: the operands broadcast against each other (NumPy rules); the result has
  the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64, and a bool base with a Python int
  exponent. The result dtype is PyTorch's promotion of the operands (dimensioned tensors
  decide, a 0-d tensor or a Python number only raises the category): int32 ** 0.5 ->
  float32, 2 ** int32 tensor -> int32, 2.5 ** int32 tensor -> float32, bool ** 2 -> int64.
- Floats follow C's `pow`: a negative base needs an integral exponent (the sign follows
  its parity), otherwise NaN (but (-inf) ** y is +-inf or +-0); x ** 0 = 1 and 1 ** y = 1
  even for NaN; 0 ** negative = inf; (+-1) ** +-inf = 1; |x| > 1 gives inf ** +inf and 0 **
  -inf, |x| < 1 the reverse. The result must be accurate to float32's published tolerance
  over the whole range (results here span many orders of magnitude), so exp2(y * log2(x))
  in plain float32 is not precise enough for float32 data. Float16/bfloat16 may be
  computed in float32 and rounded once. PyTorch special-cases scalar exponents 2, 3, 0.5, -0.5, -1 and -2 (as
  x*x, x*x*x, sqrt, rsqrt, 1/x, 1/(x*x)).
- Integers: exact repeated multiplication, wrapping around on overflow like C integers
  (2 ** 40 in int32 is 0). A negative integer exponent gives 1 for base 1, +-1 for base -1
  (by parity) and 0 otherwise; PyTorch refuses a negative Python-int exponent with integer
  tensors, so `pow_Tensor_Scalar` cases never do that.
- Scalars (the Python base or exponent) are only tested with values exactly
  representable in the common dtype. Empty and 0-d tensors are valid.
""",
    "prelu": """\
Parametric ReLU: `aten::prelu`.

    out = self            where self > 0
    out = weight[c] * self elsewhere        (c = the index along dim 1, the channel dim)

Required entry point: `prelu` (the default overload).

- `weight` is a 1-D tensor with either one element (shared by all channels) or
  `self.shape[1]` elements, one per channel; a 0-d weight also counts as one element. When
  `self` has fewer than 2 dims (a 1-D or 0-d tensor) there is no channel dim and `weight`
  must have one element.
- `self` may have any rank and be non-contiguous (e.g. a channels-last image tensor viewed as
  NCHW); neither input may be modified. The result is a new tensor with `self`'s shape and
  dtype.
- Dtypes: float16, bfloat16, float32; `weight` has the same dtype as `self` (PyTorch refuses
  mixed dtypes). The product weight * self is rounded once to the dtype (half types may be
  computed in float32). NaN in `self` gives NaN (weight * NaN). Empty tensors are valid.
""",
    "masked_fill_": """\
In-place masked fill: `aten::masked_fill_.Scalar` and `aten::masked_fill_.Tensor`.

    self[mask] <- value          (elsewhere `self` keeps its values; then `self` is returned)

Required entry points: `masked_fill__Scalar` (value is a Python number) and
`masked_fill__Tensor` (value is a 0-d tensor).

- `mask` is a bool tensor that broadcasts to `self`'s shape (e.g. an attention mask of shape
  (B, 1, L, L) for scores (B, H, L, L)); `self` is never broadcast. Either may be
  non-contiguous. `mask` and `value` must not be modified.
- In place: the result is written into `self`'s own memory through its strides, and the
  function returns that same tensor object (or one with the same storage, offset, shape and
  strides). Elements where the mask is False must be left exactly as they were.
- `value` is converted to `self`'s dtype the way a C cast does: float -> integer truncates
  toward zero (2.5 -> 2, -2.5 -> -2), anything -> bool is `!= 0`, float -> float16/bfloat16
  rounds to nearest. A 0-d `value` tensor may have another dtype than `self` (e.g. float64
  into float32) and lives on `self`'s device here. Cases only use values exactly
  representable in `self`'s dtype, and +-inf.
- Dtypes of `self`: float16, bfloat16, float32, int8..int64 and bool. Empty and 0-d tensors
  are valid.
""",
    "log_sigmoid_backward": """\
Gradient of log-sigmoid: `aten::log_sigmoid_backward`.

    log_sigmoid(x) = log(1 / (1 + exp(-x)))
    out = grad_output * sigmoid(-x) = grad_output * (1 - sigmoid(x))

Required entry point: `log_sigmoid_backward` (the default overload; the `grad_input=`
variant is not required).

- `buffer` is the second output of `aten::log_sigmoid_forward(self)`: on CPU it holds
  exp(-|x|), on CUDA it is an EMPTY tensor (numel 0). So it must not be relied on: recompute
  what you need from `self`. PyTorch computes, with z = exp(-|x|),
  x < 0: grad * (1 - z / (1 + z));  x >= 0: grad * (z / (1 + z))
  which never overflows; x = -inf gives grad, +inf gives 0, NaN gives NaN.
- `grad_output` and `self` broadcast against each other (normally the same shape); the
  result has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32; `grad_output` and `self` have the same dtype (PyTorch's
  CPU kernel refuses a mix), which the result has too. Half types are computed in float32
  and rounded once. Empty and 0-d tensors are valid.
""",
    "mish_backward": """\
Gradient of Mish: `aten::mish_backward`.

    mish(x) = x * tanh(softplus(x)),  softplus(x) = log(1 + exp(x))
    out = grad_output * (t + x * sigmoid(x) * (1 - t * t)),   t = tanh(softplus(x))

Required entry point: `mish_backward` (the default overload).

- `grad_output` and `self` (the forward input x) broadcast against each other (normally they
  have the same shape); the result has the broadcast shape. Either may be non-contiguous;
  neither may be modified.
- Dtypes: float16, bfloat16, float32. The result dtype is PyTorch's promotion of the two
  (float16 gradient with float32 input -> float32). Half types are computed in float32 and
  rounded once.
- Must be stable over the whole range: for large x, exp(x) overflows but t -> 1 and
  sigmoid -> 1 (the factor is 1); for very negative x everything tends to 0. PyTorch
  computes exactly the formula above in float32, so x = +-inf gives NaN (inf * 0) and NaN
  propagates. Empty and 0-d tensors are valid.
""",
    "softplus_backward": """\
Gradient of softplus: `aten::softplus_backward`.

    softplus(x) = log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold
    out = grad_output                               where beta * x > threshold
    out = grad_output * z / (z + 1), z = exp(beta * x)   elsewhere

Required entry point: `softplus_backward` (the default overload; the `grad_input=` variant
is not required).

- `beta` and `threshold` are Python numbers (nn.Softplus defaults: 1 and 20); beta * x and
  the comparison are computed in float32 for half and float32 data, as PyTorch does.
  Where beta * x > threshold the result is the gradient exactly, even if exp would
  overflow; x = -inf gives 0, NaN gives NaN.
- `grad_output` and `self` broadcast against each other (normally the same shape); the
  result has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32. The result dtype is PyTorch's promotion of the two
  (float16 gradient with float32 input -> float32). Half types are computed in float32 and
  rounded once. Empty and 0-d tensors are valid.
""",
    "rrelu_with_noise_backward": """\
Gradient of randomized leaky ReLU: `aten::rrelu_with_noise_backward`.

    training=True:   out = noise * grad_output
    training=False:  out = grad_output              where self > 0
                     out = grad_output * slope      elsewhere,  slope = (lower + upper) / 2

Required entry point: `rrelu_with_noise_backward` (the default overload; `.out` is not
required).

- `noise` is what the training forward drew: 1 where the input was >= 0 and a slope in
  [lower, upper] elsewhere; in training mode it alone decides the gradient (`self` is not
  read). In eval mode `noise` is ignored and the fixed mean slope is used, as in
  `leaky_relu_backward`; NaN in `self` is not > 0, so it takes the slope branch.
- `self_is_result`: `self` holds the forward's output instead of its input; with a
  non-negative slope the sign test is the same, so the result does not change (PyTorch
  refuses a negative slope then; not tested).
- `lower` and `upper` are Python floats; the slope is computed in double and used in
  float32 (half types are computed in float32 and rounded once).
- Shapes: the operands that are used broadcast against each other (noise with
  grad_output in training, grad_output with self in eval); normally all have one shape.
  Inputs may be non-contiguous and must not be modified. The result dtype is PyTorch's
  promotion of those operands. Dtypes: float16, bfloat16, float32. Empty and 0-d tensors
  are valid.
""",
    "smooth_l1_loss_backward": """\
Gradient of the smooth L1 (Huber-like) loss: `aten::smooth_l1_loss_backward`.

With d = self - target, norm = 1 / self.numel() for reduction=1 (mean) and 1 otherwise:

    out = -norm * grad_output                  where d < -beta
    out =  norm * grad_output                  where d >  beta
    out =  norm * d * grad_output / beta       elsewhere (evaluated left to right)

Required entry point: `smooth_l1_loss_backward` (the default overload; the `grad_input=`
variant is not required).

- `reduction` is 0 (none: `grad_output` has the loss's full shape), 1 (mean) or 2 (sum);
  for mean and sum `grad_output` is a 0-d tensor. `beta` > 0 is a Python float (0 is not
  tested; PyTorch's CPU and CUDA kernels treat it differently).
- `grad_output`, `self` and `target` broadcast against each other (here `target` is
  sometimes broadcast); the result has the broadcast shape and `self`'s dtype. Inputs may
  be non-contiguous and must not be modified. Empty and 0-d tensors are valid.
- Dtypes: float16, bfloat16, float32; the arithmetic is done in the common dtype of the
  three inputs (PyTorch promotion: a 0-d `grad_output` does not raise a half type; a
  float32 `self` with a float16 `target` computes in float32). A half-precision `self`
  with a float32 `target` is not tested: on an H200 the CUDA reference and a kernel that
  computes in float32 and casts once differed there by up to 3 float16 units in the last
  place, beyond the published tolerance, for a reason not yet found. PyTorch's CUDA kernel computes each step in that dtype, so for float16 and
  bfloat16 the difference, the scaled `norm` and `beta`, and every product and quotient are
  rounded to it in turn; its CPU kernel uses float32 for bfloat16. The tolerance accepts
  either: bfloat16 cases use powers of two for `beta` (and for the element count with
  mean), and float16 appears only with reduction none or sum, since with mean the tiny
  1 / numel lands in float16's subnormal range, where the two kernels disagree.
""",
}

SIGNATURES = {
    "fmax": '''\
def fmax(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::fmax(Tensor self, Tensor other) -> Tensor"""
''',
    "heaviside": '''\
def heaviside(self: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """aten::heaviside(Tensor self, Tensor values) -> Tensor"""
''',
    "logaddexp2": '''\
def logaddexp2(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::logaddexp2(Tensor self, Tensor other) -> Tensor"""
''',
    "mul": '''\
def mul_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"""

def mul_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::mul.Scalar(Tensor self, Scalar other) -> Tensor"""
''',
    "pow": '''\
def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    """aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""

def pow_Tensor_Scalar(self: torch.Tensor, exponent: int | float) -> torch.Tensor:
    """aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor"""

def pow_Scalar(self: int | float, exponent: torch.Tensor) -> torch.Tensor:
    """aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor"""
''',
    "prelu": '''\
def prelu(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """aten::prelu(Tensor self, Tensor weight) -> Tensor"""
''',
    "masked_fill_": '''\
def masked_fill__Scalar(self: torch.Tensor, mask: torch.Tensor, value: int | float | bool) -> torch.Tensor:
    """aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)"""

def masked_fill__Tensor(self: torch.Tensor, mask: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)"""
''',
    "log_sigmoid_backward": '''\
def log_sigmoid_backward(grad_output: torch.Tensor, self: torch.Tensor, buffer: torch.Tensor) -> torch.Tensor:
    """aten::log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor"""
''',
    "mish_backward": '''\
def mish_backward(grad_output: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    """aten::mish_backward(Tensor grad_output, Tensor self) -> Tensor"""
''',
    "softplus_backward": '''\
def softplus_backward(grad_output: torch.Tensor, self: torch.Tensor, beta: int | float, threshold: int | float) -> torch.Tensor:
    """aten::softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor"""
''',
    "rrelu_with_noise_backward": '''\
def rrelu_with_noise_backward(grad_output: torch.Tensor, self: torch.Tensor, noise: torch.Tensor, lower: int | float, upper: int | float, training: bool, self_is_result: bool) -> torch.Tensor:
    """aten::rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, Scalar upper, bool training, bool self_is_result) -> Tensor"""
''',
    "smooth_l1_loss_backward": '''\
def smooth_l1_loss_backward(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor, reduction: int, beta: float) -> torch.Tensor:
    """aten::smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta) -> Tensor"""
''',
}
