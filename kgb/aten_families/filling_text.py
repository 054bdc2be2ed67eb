"""The task texts and signatures of the filling family (fill_, zero_, full, new_ones,
zeros): each member's own, since they differ in where the value comes from and what
the result is."""

TASKS = {
    "fill_": """\
Fill a tensor in place with one value: `aten::fill_` (overloads `Scalar` and `Tensor`).

Sets every element of `self` to `value` and returns `self` itself (the same tensor
object, or at least a tensor with the same storage, offset, shape and strides).

- `fill__Scalar`: `value` is a Python bool, int or float (inf and nan included).
- `fill__Tensor`: `value` is a 0-d tensor (on the same device as `self`) whose dtype may
  differ from `self`'s; read it on the device rather than copying it back to the host.
- The value is converted to `self.dtype` as PyTorch converts a scalar: floats round to
  the nearest representable value; float -> integer truncates toward zero (2.75 -> 2,
  -2.75 -> -2); ints are exact, including int64 values beyond 2**31; for a bool tensor
  any nonzero value is True.
- `self` can have any dtype (float16, bfloat16, float32, int32, int64, uint8, bool), any
  rank (0-d and empty included) and any non-overlapping strides: a transposed tensor, a
  strided slice (`x[:, ::2]`), a column block of a wider matrix. Only the elements that
  `self` views may be written; the rest of its storage must stay untouched.
- The values must be written by a Triton kernel: PyTorch's own fill, zero, copy and clone
  ops are not allowed here (views and `.item()` are).

Required entry points: `fill__Scalar` and `fill__Tensor`.
""",
    "zero_": """\
Zero a tensor in place: `aten::zero_` (default overload).

Sets every element of `self` to zero (False for bool) and returns `self` itself (the same
tensor object, or at least a tensor with the same storage, offset, shape and strides).

- `self` can have any dtype (float16, bfloat16, float32, int32, int64, uint8, bool), any
  rank (0-d and empty included) and any non-overlapping strides: a transposed tensor, a
  strided slice (`x[:, ::2]`), a column block of a wider matrix. Only the elements that
  `self` views may be written; the rest of its storage must stay untouched.
- The zeros must be written by a Triton kernel: PyTorch's own fill, zero, copy and clone
  ops are not allowed here (views are).

Required entry point: `zero_`.
""",
    "full": """\
A tensor filled with one value: `aten::full` (default overload).

Returns a new tensor of shape `size` (a list of ints; `[]` gives a 0-d tensor, a 0 in it
gives an empty tensor) whose every element is `fill_value`.

- `fill_value` is a Python bool, int or float (including inf and -inf).
- Result dtype: `dtype` when given; otherwise inferred from the Python type of
  `fill_value`: bool -> torch.bool, int -> torch.int64, float -> the default floating
  dtype (float32).
- The value is converted to the result dtype as PyTorch converts a scalar: floats round to
  the nearest representable value (float16, bfloat16, float32); ints are exact, including
  int64 values beyond 2**31; for a bool result any nonzero value is True.
- `device` says where the result lives; `layout` (strided or None) and `pin_memory`
  (None or False) can be ignored. The result is contiguous.
- The values must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`) but its fill, zero, copy and clone ops are not allowed here.

Required entry point: `full`. Not required: `full.out` and `full.names`.
""",
    "new_ones": """\
Ones with another tensor's dtype and device: `aten::new_ones` (default overload).

Returns a new contiguous tensor of shape `size` (a list of ints; `[]` gives a 0-d
tensor, a 0 in it gives an empty tensor) with every element one (True for bool).
`self` only supplies defaults: its values are never read and it must not be modified.

- Result dtype: `dtype` when given, else `self.dtype` (any dtype: float16, bfloat16,
  float32, int32, int64, bool...).
- Result device: `device` when given, else `self.device`.
- `layout` (strided or None) and `pin_memory` (None or False) can be ignored.
- The ones must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`, `Tensor.new_empty`) but its fill, zero, copy and clone ops are not
  allowed here.

Required entry point: `new_ones`. Not required: `new_ones.out`.
""",
    "zeros": """\
A tensor of zeros: `aten::zeros` (default overload).

Returns a new contiguous tensor of shape `size` (a list of ints; `[]` gives a 0-d tensor,
a 0 in it gives an empty tensor) with every element equal to zero (False for bool).

- Result dtype: `dtype` when given, else the default floating dtype (float32). Any dtype
  may be requested: float16, bfloat16, float32, int32, int64, uint8, bool...
- `device` says where the result lives; `layout` (strided or None) and `pin_memory`
  (None or False) can be ignored.
- The zeros must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`) but its fill, zero, copy and clone ops are not allowed here. Freshly
  allocated memory is not zero on a GPU.

Required entry point: `zeros`. Not required: `zeros.out` and `zeros.names`.
""",
}

SIGNATURES = {
    "fill_": '''\
def fill__Scalar(self: torch.Tensor, value: bool | int | float) -> torch.Tensor:
    """aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)"""


def fill__Tensor(self: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)"""
''',
    "zero_": '''\
def zero_(self: torch.Tensor) -> torch.Tensor:
    """aten::zero_(Tensor(a!) self) -> Tensor(a!)"""
''',
    "full": '''\
def full(size: list[int], fill_value: bool | int | float, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
''',
    "new_ones": '''\
def new_ones(self: torch.Tensor, size: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
''',
    "zeros": '''\
def zeros(size: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
''',
}
