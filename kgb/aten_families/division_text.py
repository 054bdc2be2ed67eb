"""What each member of the division family says for itself: its task text, signatures,
reference functions (written into its spec) and entry points (the end of its solution,
after the strided launch and the division kernel). The shared cases and inputs are in
`division.py`."""


# ---------------------------------------------------------------- div and div_

DIV_TASK = """\
Elementwise division: `aten::div.Tensor`, `div.Scalar`, `div.Tensor_mode`, `div.Scalar_mode`.

    out = self / other                          (rounding_mode None: true division)
    out = trunc(self / other)                   (rounding_mode "trunc")
    out = floor(self / other)                   (rounding_mode "floor")

Required entry points: `div_Tensor`, `div_Scalar`, `div_Tensor_mode`, `div_Scalar_mode`
(the `_Scalar` ones take a Python number as `other`). The `out=` variants and pure-scalar
overloads (`div.int`, `div.float`, ...) are not required.

- Broadcasting: `self` and `other` broadcast against each other; the result has the
  broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32, int8..int64 and bool. The operands are first
  promoted to their common dtype (PyTorch rules: dimensioned tensors decide, a 0-d tensor or
  a Python number only raises the category). True division of integer or bool operands
  gives float32; with "trunc" or "floor" the result keeps the common dtype (integer
  division for integers; bool is not allowed there).
- Float semantics (IEEE): true division is correctly rounded (float16/bfloat16 computed in
  float32, rounded once). "trunc" truncates the quotient after it has been rounded to the
  common dtype (for half types: computed in float32, rounded to float16/bfloat16, then
  truncated, so 8.9999 rounds to 9 first). "floor" follows Python's `//`: the exact floor
  of the mathematical quotient, computed as PyTorch does from a - fmod(a, b), so 1.0 // 0.1
  is 9 (0.1 is slightly above 1/10) and a finite a floor-divided by +-inf gives 0 or -1 by
  sign; division by zero gives a / 0 (inf or nan), and inf or nan in `self` gives nan.
- Integer semantics: "trunc" rounds toward zero, "floor" toward minus infinity. Cases
  never divide an integer by zero or overflow (int_min / -1).
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
  PyTorch on CUDA divides by a Python scalar by multiplying with its reciprocal, which can
  move a "trunc" result across an integer, so "trunc" cases use powers of two there.
- Empty and 0-d tensors are valid.
"""


DIV_INPLACE_TASK = """\
In-place division: `aten::div_.Tensor`, `div_.Scalar`, `div_.Tensor_mode`, `div_.Scalar_mode`.

    self <- self / other                        (rounding_mode None: true division)
    self <- trunc(self / other)                 (rounding_mode "trunc")
    self <- floor(self / other)                 (rounding_mode "floor")
    then `self` itself is returned

Required entry points: `div__Tensor`, `div__Scalar`, `div__Tensor_mode`, `div__Scalar_mode`
(the `_Scalar` ones take a Python number as `other`).

- In place: the result is written into `self`'s own memory through its strides (it may be
  a transposed or sliced view), and the function returns that same tensor object (or one
  with the same storage, offset, shape and strides). `other` broadcasts to `self`'s shape;
  `self` is never broadcast. `other` may be non-contiguous.
- Dtypes: float16, bfloat16, float32 and (with "trunc"/"floor") int8..int64. The quotient
  is computed in the common dtype of `self` and `other` (PyTorch promotion: dimensioned
  tensors decide, a 0-d tensor or a Python number only raises the category) and cast to
  `self`'s dtype; e.g. a float16 `self` divided by a float32 tensor is computed in float32
  and rounded to float16 once. True division needs a floating `self` (PyTorch refuses an
  integer one); the cases respect that.
- Float semantics (IEEE): true division is correctly rounded (half types computed in
  float32). "trunc" truncates the quotient after it has been rounded to the common dtype
  (half types: float32 quotient rounded to half, then truncated). "floor" follows Python's
  `//`: the exact floor of the mathematical quotient, computed as PyTorch does from
  a - fmod(a, b), so 1.0 // 0.1 is 9 and a finite a floor-divided by +-inf gives 0 or -1 by
  sign; division by zero gives a / 0 (inf or nan), and inf or nan in `self` gives nan.
- Integer semantics: "trunc" rounds toward zero, "floor" toward minus infinity. Cases
  never divide an integer by zero or overflow.
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
  PyTorch on CUDA divides by a Python scalar by multiplying with its reciprocal, which can
  move a "trunc" result across an integer, so "trunc" cases use powers of two there.
- Empty and 0-d tensors are valid.
"""


# `{op}` is div or div_; `{self}` and `{ret}` are the schema's argument and return types
# (Tensor, or Tensor(a!) for the in-place op).
DIV_SIGNATURES = '''\
def {op}_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::{op}.Tensor({self} self, Tensor other) -> {ret}"""

def {op}_Scalar(self: torch.Tensor, other: int | float | bool) -> torch.Tensor:
    """aten::{op}.Scalar({self} self, Scalar other) -> {ret}"""

def {op}_Tensor_mode(self: torch.Tensor, other: torch.Tensor, *, rounding_mode: str | None) -> torch.Tensor:
    """aten::{op}.Tensor_mode({self} self, Tensor other, *, str? rounding_mode) -> {ret}"""

def {op}_Scalar_mode(self: torch.Tensor, other: int | float | bool, *, rounding_mode: str | None) -> torch.Tensor:
    """aten::{op}.Scalar_mode({self} self, Scalar other, *, str? rounding_mode) -> {ret}"""
'''

DIV_REFERENCES = '''\
def {op}_Tensor(self, other):
    return torch.ops.aten.{op}.Tensor(self, other)


def {op}_Scalar(self, other):
    return torch.ops.aten.{op}.Scalar(self, other)


def {op}_Tensor_mode(self, other, *, rounding_mode):
    return torch.ops.aten.{op}.Tensor_mode(self, other, rounding_mode=rounding_mode)


def {op}_Scalar_mode(self, other, *, rounding_mode):
    return torch.ops.aten.{op}.Scalar_mode(self, other, rounding_mode=rounding_mode)


reference = {{
    "{op}_Tensor": {op}_Tensor,
    "{op}_Scalar": {op}_Scalar,
    "{op}_Tensor_mode": {op}_Tensor_mode,
    "{op}_Scalar_mode": {op}_Scalar_mode,
}}
'''

# `{helper}` is `_div` or `_div_`, defined just above the entry points by DIV_HELPER or
# DIV_INPLACE_HELPER.
DIV_ENTRIES = '''\
def {op}_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return {helper}(self, other, None)


def {op}_Scalar(self: torch.Tensor, other) -> torch.Tensor:
    return {helper}(self, other, None)


def {op}_Tensor_mode(self: torch.Tensor, other: torch.Tensor, *, rounding_mode: str | None = None) -> torch.Tensor:
    return {helper}(self, other, rounding_mode)


def {op}_Scalar_mode(self: torch.Tensor, other, *, rounding_mode: str | None = None) -> torch.Tensor:
    return {helper}(self, other, rounding_mode)
'''

DIV_HELPER = '''\
def _div_dtype(a, b, rounding_mode):
    common = torch.result_type(a, b)
    if rounding_mode is None and not common.is_floating_point:
        return torch.get_default_dtype()
    return common


def _div(self, other, rounding_mode):
    shape = torch.broadcast_shapes(self.shape, other.shape) if isinstance(other, torch.Tensor) else self.shape
    out = torch.empty(shape, dtype=_div_dtype(self, other, rounding_mode), device=self.device)
    return _div_into(out, self, other, rounding_mode)
'''

DIV_INPLACE_HELPER = '''\
def _div_(self, other, rounding_mode):
    # the result is computed in the promoted dtype and cast to self's dtype on the store
    return _div_into(self, self, other, rounding_mode)
'''


# ---------------------------------------------------------------- floor_divide

FLOOR_DIVIDE_TASK = """\
Floor division: `aten::floor_divide` and `aten::floor_divide.Scalar`.

    out = floor(self / other)        (Python's `//`, same as div with rounding_mode="floor")

Required entry points: `floor_divide` (other is a tensor) and `floor_divide_Scalar` (other
is a Python number). The `out=` variants are not required.

- Broadcasting: `self` and `other` broadcast against each other; the result has the
  broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32 and int8..int64 (bool is refused by PyTorch). The
  result has the common dtype of the operands under PyTorch's promotion (dimensioned
  tensors decide, a 0-d tensor or a Python number only raises the category), e.g. int32 //
  2.5 -> float32, int16 // int64 -> int64, bfloat16 // 0-d float32 -> bfloat16.
- Float semantics: the exact floor of the mathematical quotient, computed as PyTorch does
  from a - fmod(a, b) (half types in float32, rounded once), so 1.0 // 0.1 is 9 (0.1 is
  slightly above 1/10) and a finite a floor-divided by +-inf gives 0 or -1 by sign; division
  by zero gives a / 0 (inf or nan), and inf or nan in `self` gives nan.
- Integer semantics: rounding toward minus infinity (-7 // 2 = -4). Cases never divide an
  integer by zero or overflow (int_min // -1).
- A Python scalar, or a 0-d tensor of a wider float dtype, is only tested with values
  exactly representable in the common dtype (PyTorch's CPU and CUDA kernels disagree on
  whether such a value is rounded to a half-precision common dtype before use).
- Empty and 0-d tensors are valid.
"""

FLOOR_DIVIDE_SIGNATURES = '''\
def floor_divide(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::floor_divide(Tensor self, Tensor other) -> Tensor"""

def floor_divide_Scalar(self: torch.Tensor, other: int | float) -> torch.Tensor:
    """aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor"""
'''

FLOOR_DIVIDE_REFERENCES = '''\
def floor_divide(self, other):
    return torch.ops.aten.floor_divide.default(self, other)


def floor_divide_Scalar(self, other):
    return torch.ops.aten.floor_divide.Scalar(self, other)


reference = {"floor_divide": floor_divide, "floor_divide_Scalar": floor_divide_Scalar}
'''

FLOOR_DIVIDE_ENTRIES = '''\
def _floor_divide(self, other):
    shape = torch.broadcast_shapes(self.shape, other.shape) if isinstance(other, torch.Tensor) else self.shape
    out = torch.empty(shape, dtype=torch.result_type(self, other), device=self.device)
    return _div_into(out, self, other, "floor")


def floor_divide(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return _floor_divide(self, other)


def floor_divide_Scalar(self: torch.Tensor, other) -> torch.Tensor:
    return _floor_divide(self, other)
'''
